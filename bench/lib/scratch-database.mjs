// A scratch PostgreSQL database and data directory for a bench or script: created beside
// adminUrl's database, dropped (with the directory) by cleanup(), also on SIGINT/SIGTERM;
// BENCH_KEEP=1 keeps the database. `db` is a pg client for it, not yet connected (a caller that
// opens its own pool leaves it so). stopServers() is called first, so no `tapedeck serve` a
// bench started still holds a connection.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export async function openScratchDatabase(label, adminUrl, stopServers = async () => {}) {
  const name = `tapedeck_bench_${label}_${process.pid.toString(16)}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `tapedeck-bench-${label}-`));
  const db = new pg.Client({ connectionString: url });
  const cleanup = async () => {
    await stopServers().catch(() => {});
    await db.end().catch(() => {});
    if (process.env.BENCH_KEEP === '1') console.log(`kept database ${name}`);
    else
      await admin
        .query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        .catch((e) => console.error(`could not drop ${name}: ${e.message}`));
    await admin.end().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.once(signal, () => {
      cleanup().finally(() => process.exit(130));
    });
  const pgVersion = (await admin.query('SHOW server_version')).rows[0].server_version;
  console.log(
    `${label}: node ${process.version}, PostgreSQL ${pgVersion}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  return { url, dataDir, db, cleanup };
}
