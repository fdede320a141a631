/**
 * The compose stack, checked without Docker (no engine runs where these tests do).
 *
 * docker-compose.yml, deploy/otel-collector.yaml and deploy/Dockerfile are parsed, and
 * every place where one names another (service names, ports, database URL, mounted files,
 * copied paths) is checked against the other and against tapedeck's own configuration:
 * the tapedeck service's environment goes through the real `loadConfig`, so a setting
 * tapedeck would reject, or a port it would not listen on, fails here.
 *
 * Not covered: that the images build and the containers start. `docker compose config`
 * and the collector's `validate` command do that where Docker runs (docs/deploy.md).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig, type Config } from '../../../src/config.js';
import {
  copiesOf,
  dependsOn,
  envOf,
  environmentOf,
  execForm,
  imagePathOf,
  instructionsOf,
  isDockerIgnored,
  mountsOf,
  parseDockerfile,
  placementsOf,
  portsOf,
  readRepoFile,
  readYaml,
  repoRoot,
  splitHostPort,
  workdirOf,
  type ComposeFile,
} from './deploy-files.js';

/** Service names as docker-compose.yml spells them; other services reach each other by these. */
const POSTGRES = 'postgres';
const TAPEDECK = 'tapedeck';
const COLLECTOR = 'otel-collector';

/** The OTLP specification's default ports, which SDKs export to unless told otherwise. */
const OTLP_STANDARD_PORTS = { grpc: 4317, http: 4318 } as const;

/** Where the contrib image reads its configuration unless --config says otherwise. */
const COLLECTOR_DEFAULT_CONFIG_PATH = '/etc/otelcol-contrib/config.yaml';

const compose = readYaml<ComposeFile>('docker-compose.yml');
const services = compose.services;
const tapedeckEnv = environmentOf(services[TAPEDECK]);
/** What tapedeck itself makes of the environment compose gives it. */
const tapedeckConfig: Config = loadConfig(tapedeckEnv);

interface CollectorConfig {
  receivers: { otlp: { protocols: { grpc: { endpoint: string }; http: { endpoint: string } } } } & Record<
    string,
    unknown
  >;
  processors: Record<string, unknown>;
  exporters: Record<
    string,
    {
      endpoint: string;
      tls?: { insecure?: boolean };
      retry_on_failure?: { enabled?: boolean };
      sending_queue?: { enabled?: boolean };
    }
  >;
  extensions?: Record<string, unknown>;
  service: {
    extensions?: string[];
    pipelines: Record<string, { receivers: string[]; processors?: string[]; exporters: string[] }>;
  };
}

const collectorConfig = readYaml<CollectorConfig>('deploy/otel-collector.yaml');

/** `otlp_grpc/tapedeck` → `otlp_grpc`: a component id is its type, optionally `/name`. */
const typeOf = (id: string) => id.split('/')[0];
const GRPC_EXPORTERS = ['otlp', 'otlp_grpc'];
const HTTP_EXPORTERS = ['otlphttp', 'otlp_http'];

/** Where an OTLP exporter sends (host, port, protocol); undefined for other exporter types. */
function exporterTarget(id: string): { host: string; port: number; protocol: 'grpc' | 'http' } | undefined {
  const { endpoint } = collectorConfig.exporters[id];
  if (GRPC_EXPORTERS.includes(typeOf(id))) {
    const { host, port } = splitHostPort(endpoint.replace(/^https?:\/\//, ''));
    return { host, port, protocol: 'grpc' };
  }
  if (!HTTP_EXPORTERS.includes(typeOf(id))) return undefined;
  const url = new URL(endpoint);
  return { host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)), protocol: 'http' };
}

const exportsToTapedeck = (id: string) => exporterTarget(id)?.host === TAPEDECK;

describe('docker-compose.yml', () => {
  it('has the postgres, tapedeck and otel-collector services', () => {
    expect(Object.keys(services).sort()).toEqual([COLLECTOR, POSTGRES, TAPEDECK].sort());
  });

  it('gives tapedeck an environment that its configuration loader accepts', () => {
    expect(() => loadConfig(tapedeckEnv)).not.toThrow();
    expect(tapedeckConfig.databaseUrl).not.toBeNull();
  });

  it('makes tapedeck listen on every interface inside its container', () => {
    expect(tapedeckEnv.TAPEDECK_HOST).toBe('0.0.0.0');
    expect(tapedeckConfig.host).toBe('0.0.0.0');
    // beyond loopback, an open server must be chosen consciously (or credentials set)
    expect(tapedeckConfig.allowOpen || tapedeckConfig.tokens !== null || tapedeckConfig.tokensFile !== null).toBe(true);
  });

  it('points TAPEDECK_DATABASE_URL at the postgres service with its user, password and database', () => {
    const url = new URL(tapedeckEnv.TAPEDECK_DATABASE_URL);
    const pgEnv = environmentOf(services[POSTGRES]);
    expect(['postgres:', 'postgresql:']).toContain(url.protocol);
    expect(url.hostname).toBe(POSTGRES);
    expect(url.port === '' || url.port === '5432').toBe(true);
    expect(decodeURIComponent(url.username)).toBe(pgEnv.POSTGRES_USER);
    expect(decodeURIComponent(url.password)).toBe(pgEnv.POSTGRES_PASSWORD);
    expect(url.pathname).toBe(`/${pgEnv.POSTGRES_DB}`);
  });

  it('starts tapedeck only once pg_isready reports postgres healthy for that user and database', () => {
    expect(dependsOn(services[TAPEDECK])[POSTGRES]).toBe('service_healthy');
    const pgEnv = environmentOf(services[POSTGRES]);
    const test = services[POSTGRES].healthcheck?.test;
    const command = Array.isArray(test) ? test.join(' ') : String(test);
    expect(command).toContain('pg_isready');
    expect(command).toContain(`-U ${pgEnv.POSTGRES_USER}`);
    expect(command).toContain(`-d ${pgEnv.POSTGRES_DB}`);
  });

  it('keeps the database and the payloads on named volumes', () => {
    const declared = Object.keys(compose.volumes ?? {});
    const pgData = mountsOf(services[POSTGRES]).find((m) => m.target === '/var/lib/postgresql/data');
    expect(declared).toContain(pgData?.source);
    // payloads go under TAPEDECK_DATA_DIR: it must be a volume, not the container's own layer
    expect(path.posix.isAbsolute(tapedeckEnv.TAPEDECK_DATA_DIR)).toBe(true);
    const data = mountsOf(services[TAPEDECK]).find((m) => m.target === tapedeckEnv.TAPEDECK_DATA_DIR);
    expect(declared).toContain(data?.source);
  });

  it('publishes exactly the gRPC and HTTP ports tapedeck listens on', () => {
    const targets = portsOf(services[TAPEDECK])
      .map((p) => p.target)
      .sort();
    expect(targets).toEqual([tapedeckConfig.grpcPort, tapedeckConfig.httpPort].sort());
  });

  it('publishes the collector on the standard OTLP ports, so default SDK settings reach it', () => {
    const published = Object.fromEntries(portsOf(services[COLLECTOR]).map((p) => [p.target, p.published]));
    const receiver = collectorConfig.receivers.otlp.protocols;
    expect(published[splitHostPort(receiver.grpc.endpoint).port]).toBe(OTLP_STANDARD_PORTS.grpc);
    expect(published[splitHostPort(receiver.http.endpoint).port]).toBe(OTLP_STANDARD_PORTS.http);
  });

  it('never publishes one host port twice, nor a service port that nothing listens on', () => {
    const all = Object.values(services).flatMap((s) => portsOf(s));
    const hostPorts = all.map((p) => p.published).filter((p) => p !== undefined);
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
    expect(portsOf(services[POSTGRES])).toEqual([]);
  });

  it('binds every published port to loopback, like tapedeck outside a container', () => {
    // tapedeck has no authentication; docs/deploy.md says how to open it up deliberately
    for (const p of Object.values(services).flatMap((s) => portsOf(s))) expect(p.hostIp).toBe('127.0.0.1');
  });

  it('builds tapedeck from deploy/Dockerfile with the repository root as context', () => {
    const build = services[TAPEDECK].build;
    expect(typeof build).toBe('object');
    const { context, dockerfile } = build as { context?: string; dockerfile?: string };
    expect(path.resolve(repoRoot, context ?? '.')).toBe(repoRoot);
    expect(dockerfile).toBe('deploy/Dockerfile');
    expect(existsSync(path.join(repoRoot, dockerfile!))).toBe(true);
  });

  it('runs the contrib collector at a pinned version', () => {
    expect(services[COLLECTOR].image).toMatch(/^otel\/opentelemetry-collector-contrib:\d+\.\d+\.\d+$/);
  });

  it('mounts deploy/otel-collector.yaml where the collector reads its configuration', () => {
    const command = services[COLLECTOR].command;
    const args = typeof command === 'string' ? command.split(/\s+/) : (command ?? []);
    const flag = args.find((a) => a.startsWith('--config='));
    const configPath = flag ? flag.slice('--config='.length) : COLLECTOR_DEFAULT_CONFIG_PATH;
    const mount = mountsOf(services[COLLECTOR]).find((m) => m.target === configPath);
    expect(mount, `nothing is mounted at ${configPath}`).toBeDefined();
    expect(path.resolve(repoRoot, mount!.source!)).toBe(path.join(repoRoot, 'deploy/otel-collector.yaml'));
  });
});

describe('deploy/otel-collector.yaml', () => {
  it('receives OTLP on every interface, gRPC on 4317 and HTTP on 4318', () => {
    const { grpc, http } = collectorConfig.receivers.otlp.protocols;
    expect(splitHostPort(grpc.endpoint)).toEqual({ host: '0.0.0.0', port: OTLP_STANDARD_PORTS.grpc });
    expect(splitHostPort(http.endpoint)).toEqual({ host: '0.0.0.0', port: OTLP_STANDARD_PORTS.http });
  });

  it.each(['traces', 'logs'])('has a %s pipeline from the otlp receiver to tapedeck', (signal) => {
    const pipelines = Object.entries(collectorConfig.service.pipelines).filter(([id]) => typeOf(id) === signal);
    expect(pipelines.length).toBeGreaterThan(0);
    for (const [, pipeline] of pipelines) {
      expect(pipeline.receivers).toContain('otlp');
      const toTapedeck = pipeline.exporters.filter(exportsToTapedeck);
      expect(toTapedeck.length).toBeGreaterThan(0);
    }
  });

  it('sends to the tapedeck service on the port tapedeck listens on for that protocol', () => {
    const ids = Object.keys(collectorConfig.exporters).filter((id) => exporterTarget(id) !== undefined);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) {
      const target = exporterTarget(id)!;
      expect(target.host, id).toBe(TAPEDECK);
      expect(target.port, id).toBe(target.protocol === 'grpc' ? tapedeckConfig.grpcPort : tapedeckConfig.httpPort);
      // inside the compose network tapedeck speaks plain gRPC/HTTP
      if (target.protocol === 'grpc') expect(collectorConfig.exporters[id].tls?.insecure, id).toBe(true);
      else expect(collectorConfig.exporters[id].endpoint, id).toMatch(/^http:\/\//);
    }
  });

  it('retries and queues what it sends to tapedeck, which answers UNAVAILABLE while its database is away', () => {
    const toTapedeck = Object.keys(collectorConfig.exporters).filter(exportsToTapedeck);
    for (const id of toTapedeck) {
      const exporter = collectorConfig.exporters[id];
      expect(exporter.retry_on_failure?.enabled, id).toBe(true);
      expect(exporter.sending_queue?.enabled, id).toBe(true);
    }
  });

  it('defines every component a pipeline names, with memory_limiter first', () => {
    for (const [id, pipeline] of Object.entries(collectorConfig.service.pipelines)) {
      for (const r of pipeline.receivers) expect(collectorConfig.receivers, `${id}: receiver ${r}`).toHaveProperty([r]);
      for (const p of pipeline.processors ?? [])
        expect(collectorConfig.processors, `${id}: processor ${p}`).toHaveProperty([p]);
      for (const e of pipeline.exporters) expect(collectorConfig.exporters, `${id}: exporter ${e}`).toHaveProperty([e]);
      const processors = pipeline.processors ?? [];
      if (processors.includes('memory_limiter')) expect(processors[0], id).toBe('memory_limiter');
    }
    for (const e of collectorConfig.service.extensions ?? [])
      expect(collectorConfig.extensions ?? {}).toHaveProperty([e]);
  });
});

describe('deploy/Dockerfile', () => {
  const stages = parseDockerfile(readRepoFile('deploy/Dockerfile'));
  const runtime = stages.at(-1)!;
  const packageJson = JSON.parse(readRepoFile('package.json')) as {
    bin: Record<string, string>;
    files: string[];
    scripts: Record<string, string>;
  };

  it('is multi-stage, every stage on Node 20', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const names = stages.map((s) => s.name);
    for (const stage of stages) {
      if (!names.includes(stage.image)) expect(stage.image).toMatch(/^node:20[.-]/);
    }
  });

  it('runs as a user that is not root', () => {
    const user = instructionsOf(runtime, 'USER').at(-1);
    expect(user).toBeDefined();
    expect(user!.split(':')[0]).not.toMatch(/^(root|0)$/);
  });

  it('installs only production dependencies in the runtime stage', () => {
    const runs = instructionsOf(runtime, 'RUN').join('\n');
    expect(runs).toMatch(/npm ci\b[^\n&;]*--omit=dev/);
  });

  it('copies dist from where the build stage compiles it', () => {
    const build = stages.find((s) => s.name !== undefined && copiesOf(runtime).some((c) => c.from === s.name));
    expect(build, 'the runtime stage copies nothing from a build stage').toBeDefined();
    expect(instructionsOf(build!, 'RUN').join('\n')).toContain('npm run build');
    const tsconfig = JSON.parse(readRepoFile('tsconfig.json')) as { compilerOptions: { outDir: string } };
    const outDir = path.posix.resolve(workdirOf(build!), tsconfig.compilerOptions.outDir);
    const fromBuild = copiesOf(runtime).filter((c) => c.from === build!.name);
    expect(fromBuild.flatMap((c) => c.sources)).toContain(outDir);
  });

  it('lays out everything the package ships (package.json "files"), proto and migrations, as in the repository', () => {
    // package.json too: the code finds proto/ and the migrations from the directory holding it
    const workdir = workdirOf(runtime);
    const placements = placementsOf(runtime, stages);
    for (const file of [...packageJson.files, 'package.json', 'proto', 'src/tapes/migrations']) {
      expect(imagePathOf(file, placements), `${file} is not copied into the runtime stage at its repository path`).toBe(
        path.posix.join(workdir, file),
      );
    }
  });

  it('copies from the build context only paths that exist and that .dockerignore lets through', () => {
    const dockerignore = readRepoFile('.dockerignore');
    const sources = stages.flatMap((s) =>
      copiesOf(s)
        .filter((c) => c.from === undefined)
        .flatMap((c) => c.sources),
    );
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(path.join(repoRoot, source)), `${source} does not exist`).toBe(true);
      expect(isDockerIgnored(source, dockerignore), `${source} is excluded by .dockerignore`).toBe(false);
    }
  });

  it('keeps the host node_modules and dist out of the build context', () => {
    const dockerignore = readRepoFile('.dockerignore');
    expect(isDockerIgnored('node_modules', dockerignore)).toBe(true);
    expect(isDockerIgnored('dist', dockerignore)).toBe(true);
  });

  it('starts what `npm start` starts: the package bin with `serve`, with the Node options of its #! line', () => {
    const command = [
      ...execForm(instructionsOf(runtime, 'ENTRYPOINT').at(-1)!),
      ...execForm(instructionsOf(runtime, 'CMD').at(-1)!),
    ];
    expect(command.join(' ')).toBe(packageJson.scripts.start);
    // node, its options, the bin, the bin's arguments
    const binAt = command.findIndex((a, i) => i > 0 && !a.startsWith('--'));
    const options = command.slice(1, binAt);
    const bin = command[binAt];
    const workdir = workdirOf(runtime);
    expect(path.posix.resolve(workdir, bin)).toBe(path.posix.resolve(workdir, packageJson.bin.tapedeck));
    // the bin's source: `tapedeck serve` from the installed package runs with the same options
    const shebang = readRepoFile('src/cli/main.ts').split('\n', 1)[0];
    expect(shebang).toBe(`#!/usr/bin/env -S node ${options.join(' ')}`.trimEnd());
    expect(options).toContain('--max-semi-space-size=8');
  });

  it("listens on every interface and exposes tapedeck's default ports", () => {
    expect(envOf(runtime).TAPEDECK_HOST).toBe('0.0.0.0');
    const exposed = instructionsOf(runtime, 'EXPOSE')
      .flatMap((a) => a.split(/\s+/))
      .map((p) => Number(p.split('/')[0]));
    expect(exposed).toEqual(expect.arrayContaining([defaultConfig.grpcPort, defaultConfig.httpPort]));
  });

  it('checks health on /healthz with node, on the configured or default HTTP port', () => {
    const healthcheck = instructionsOf(runtime, 'HEALTHCHECK').at(-1);
    expect(healthcheck).toBeDefined();
    const command = execForm(healthcheck!.replace(/^(?:--\S+\s+)*CMD\s+/, ''));
    expect(command[0]).toBe('node');
    const script = command.join(' ');
    expect(script).toContain('/healthz');
    expect(script).toContain('TAPEDECK_HTTP_PORT');
    expect(script).toContain(`'${defaultConfig.httpPort}'`);
  });

  it('keeps payloads in the data directory the compose file mounts a volume on', () => {
    expect(envOf(runtime).TAPEDECK_DATA_DIR).toBe(tapedeckEnv.TAPEDECK_DATA_DIR);
  });
});
