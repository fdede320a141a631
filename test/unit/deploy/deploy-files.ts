/**
 * Readers for the deployment files, for tests that cannot run Docker: the compose file and
 * the collector configuration (YAML), the Dockerfile (instructions by stage) and
 * .dockerignore (Docker's matching rules). Only the syntax those files use is handled;
 * anything else throws, so a new construct fails the tests instead of passing unchecked.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export function readRepoFile(relativePath: string): string {
  return readFileSync(path.join(repoRoot, relativePath), 'utf8');
}

export function readYaml<T>(relativePath: string): T {
  return parse(readRepoFile(relativePath)) as T;
}

// ---- docker-compose.yml -------------------------------------------------------------

export interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | { target: number; published?: string | number; host_ip?: string; protocol?: string })[];
  volumes?: (string | { type?: string; source?: string; target: string })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[] };
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** A service's environment as strings, from either the map or the `KEY=value` list form. */
export function environmentOf(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  const out: Record<string, string> = {};
  if (Array.isArray(env)) {
    for (const entry of env) {
      const eq = entry.indexOf('=');
      if (eq < 0) throw new Error(`environment entry without a value: ${entry}`);
      out[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
  } else {
    for (const [key, value] of Object.entries(env)) out[key] = value === null ? '' : String(value);
  }
  for (const value of Object.values(out)) {
    if (value.includes('${')) throw new Error(`variable interpolation is not handled by these tests: ${value}`);
  }
  return out;
}

export interface PortMapping {
  hostIp: string | undefined;
  published: number | undefined;
  target: number;
  protocol: string;
}

/** Compose's short (`[ip:]published:target[/protocol]`) and long port syntax. */
export function portsOf(service: ComposeService): PortMapping[] {
  return (service.ports ?? []).map((entry) => {
    if (typeof entry === 'object') {
      return {
        hostIp: entry.host_ip,
        published: entry.published === undefined ? undefined : toPort(String(entry.published)),
        target: entry.target,
        protocol: entry.protocol ?? 'tcp',
      };
    }
    const [spec, protocol = 'tcp'] = String(entry).split('/');
    const parts = spec.split(':');
    if (parts.length === 1) return { hostIp: undefined, published: undefined, target: toPort(parts[0]), protocol };
    if (parts.length === 2)
      return { hostIp: undefined, published: toPort(parts[0]), target: toPort(parts[1]), protocol };
    if (parts.length === 3)
      return { hostIp: parts[0], published: toPort(parts[1]), target: toPort(parts[2]), protocol };
    throw new Error(`port syntax not handled by these tests: ${entry}`);
  });
}

function toPort(text: string): number {
  if (!/^\d+$/.test(text)) throw new Error(`not a single port number (ranges are not handled): ${text}`);
  return Number(text);
}

export interface Mount {
  source: string | undefined;
  target: string;
}

/** Short (`source:target[:mode]`) and long volume syntax. */
export function mountsOf(service: ComposeService): Mount[] {
  return (service.volumes ?? []).map((entry) => {
    if (typeof entry === 'object') return { source: entry.source, target: entry.target };
    const parts = entry.split(':');
    if (parts.length === 1) return { source: undefined, target: parts[0] };
    return { source: parts[0], target: parts[1] };
  });
}

export function dependsOn(service: ComposeService): Record<string, string> {
  const deps = service.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((name) => [name, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([name, d]) => [name, d.condition ?? 'service_started']));
}

/** `host:port` as written in collector endpoints. */
export function splitHostPort(endpoint: string): { host: string; port: number } {
  const colon = endpoint.lastIndexOf(':');
  if (colon < 0) throw new Error(`endpoint without a port: ${endpoint}`);
  return { host: endpoint.slice(0, colon), port: toPort(endpoint.slice(colon + 1)) };
}

// ---- deploy/Dockerfile --------------------------------------------------------------

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  image: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** Splits a Dockerfile into stages of instructions; continuation lines joined, comments dropped. */
export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*#/.test(line)) continue; // comment lines, also inside a continuation
    const continued = /^(.*)\\\s*$/.exec(line);
    if (continued) {
      pending += `${continued[1]} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    if (full) logical.push(full);
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword, args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args: args.trim() };
    if (instruction.keyword === 'FROM') {
      const m = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      if (!m) throw new Error(`FROM not handled by these tests: ${line}`);
      stages.push({ image: m[1], name: m[2], instructions: [] });
    } else if (instruction.keyword === 'ARG' && stages.length === 0) {
      throw new Error('ARG before FROM is not handled by these tests');
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`instruction before the first FROM: ${line}`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

export function instructionsOf(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

/** Exec form (`["a", "b"]`) as a list; shell form is not accepted where this is used. */
export function execForm(args: string): string[] {
  if (!args.startsWith('[')) throw new Error(`expected the exec form ["...", ...], got: ${args}`);
  return JSON.parse(args) as string[];
}

/** Every `ENV` setting of a stage, later ones winning. */
export function envOf(stage: Stage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const args of instructionsOf(stage, 'ENV')) {
    if (!args.includes('=')) {
      const [key, ...rest] = args.split(/\s+/);
      out[key] = rest.join(' ');
      continue;
    }
    for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
      out[m[1]] = m[2].startsWith('"') ? (JSON.parse(m[2]) as string) : m[2];
    }
  }
  return out;
}

export interface Copy {
  from: string | undefined;
  sources: string[];
  /** absolute path in the image, resolved against the WORKDIR in effect */
  destination: string;
  /** the destination is a directory the sources go into (trailing slash, or several sources) */
  intoDirectory: boolean;
}

export function copiesOf(stage: Stage): Copy[] {
  let workdir = '/';
  const copies: Copy[] = [];
  for (const { keyword, args } of stage.instructions) {
    if (keyword === 'WORKDIR') workdir = path.posix.resolve(workdir, args);
    if (keyword !== 'COPY' && keyword !== 'ADD') continue;
    const words = args.split(/\s+/);
    const flags = words.filter((w) => w.startsWith('--'));
    const paths = words.filter((w) => !w.startsWith('--'));
    if (paths.length < 2 || args.includes('[') || /[*?]/.test(args)) {
      throw new Error(`${keyword} form not handled by these tests: ${args}`);
    }
    const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
    const destination = paths.at(-1)!;
    copies.push({
      from,
      sources: paths.slice(0, -1),
      destination: path.posix.resolve(workdir, destination),
      intoDirectory: destination.endsWith('/') || paths.length > 2,
    });
  }
  return copies;
}

/** A tree put into the image: `repoPath` (relative to the repository root) lands at `imagePath`. */
export interface Placement {
  repoPath: string;
  imagePath: string;
}

/**
 * Where each COPY of `stage` puts which part of the repository. A `--from=<stage>` source
 * is mapped back to the repository through that stage's WORKDIR (its build output, such
 * as dist/, sits where a checkout has it). Docker's rules: a file copied into a directory
 * keeps its name; a directory's contents are copied, not the directory itself.
 */
export function placementsOf(stage: Stage, stages: Stage[]): Placement[] {
  return copiesOf(stage).flatMap((copy) =>
    copy.sources.map((source) => {
      let repoPath = source;
      if (copy.from !== undefined) {
        const origin = stages.find((s) => s.name === copy.from);
        if (!origin) throw new Error(`COPY --from=${copy.from}: no such stage`);
        repoPath = path.posix.relative(workdirOf(origin), path.posix.resolve(workdirOf(origin), source));
        if (repoPath.startsWith('..'))
          throw new Error(`COPY --from=${copy.from} ${source}: outside the stage's WORKDIR`);
      }
      repoPath = path.posix.normalize(repoPath).replace(/\/+$/, '');
      if (!copy.intoDirectory) return { repoPath, imagePath: copy.destination };
      if (copy.from !== undefined)
        throw new Error(`COPY --from into a directory is not handled by these tests: ${source}`);
      const onDisk = path.join(repoRoot, repoPath);
      const isDirectory = existsSync(onDisk) && statSync(onDisk).isDirectory();
      const imagePath = isDirectory
        ? copy.destination
        : path.posix.join(copy.destination, path.posix.basename(repoPath));
      return { repoPath, imagePath };
    }),
  );
}

/** Where repository path `repoPath` ends up in the image, if a placement covers it. */
export function imagePathOf(repoPath: string, placements: Placement[]): string | undefined {
  const wanted = path.posix.normalize(repoPath).replace(/\/+$/, '');
  for (const p of placements) {
    if (p.repoPath === '.') return path.posix.join(p.imagePath, wanted);
    if (wanted === p.repoPath) return p.imagePath;
    if (wanted.startsWith(`${p.repoPath}/`)) return path.posix.join(p.imagePath, wanted.slice(p.repoPath.length + 1));
  }
  return undefined;
}

export function workdirOf(stage: Stage): string {
  return instructionsOf(stage, 'WORKDIR').reduce((dir, next) => path.posix.resolve(dir, next), '/');
}

// ---- .dockerignore ------------------------------------------------------------------

/**
 * Whether Docker leaves `relativePath` out of the build context: patterns are matched
 * against the path and each of its parent directories, in order, `!` re-including.
 */
export function isDockerIgnored(relativePath: string, dockerignore: string): boolean {
  const patterns = dockerignore
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const clean = path.posix
    .normalize(relativePath)
    .replace(/^\.?\/+/, '')
    .replace(/\/+$/, '');
  const segments = clean.split('/');
  const candidates = segments.map((_, i) => segments.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    const pattern = path.posix
      .normalize(negated ? raw.slice(1) : raw)
      .replace(/^\/+/, '')
      .replace(/\/+$/, '');
    const re = globToRegExp(pattern);
    if (candidates.some((c) => re.test(c))) ignored = !negated;
  }
  return ignored;
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') {
        i++;
        re += '(?:.*/)?';
      } else {
        re += '.*';
      }
    } else if (c === '*') {
      re += '[^/]*';
    } else if (c === '?') {
      re += '[^/]';
    } else {
      re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`);
}
