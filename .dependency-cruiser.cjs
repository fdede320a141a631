/**
 * The layers of src/ and the directions imports may run between them (npm run lint checks
 * them with `depcruise src`). Every import inside src/ must match an `allowed` rule; one that
 * matches none is reported as not-in-allowed. docs/architecture.md describes the layers.
 *
 *   entry        index.ts, server.ts, cli/
 *   transports   ingest's receivers (HTTP, gRPC, admission, body and its decoding), exporter/, api/,
 *                mcp/ (the MCP tools: read features only, never replay/),
 *                console/ (the web console's built files; it reads the API over HTTP)
 *   erasure      erasure/: erasing and retention delete from the store; replays hear of erasures
 *   composition  open-store.ts: the database, payload store and deriving, wired from config
 *   read side    cassettes/, diff/, recall/ (search), replay/, runs/   beside  ingest (ingest.ts, write-spans.ts, arrival.ts)
 *                                                                       derive/
 *   tapes/       stored spans, steps and runs; tapes read back
 *   recall index recall's words (tokenizing, hashing), written with the steps and messages
 *   pricing/, payloads/, normalize/, http/, auth/, store/
 *   shared       spans/, json/, otlp/, deadline/, metrics/, config.ts, errors.ts, logger.ts, ...
 */
const RECALL_INDEX =
  'recorded-text|tokenize|word-hash|ascii-words|ascii-words-wasm|scan';

const LAYERS = {
  entry: '^src/(index|server)[.]ts$|^src/cli/|^src/testing/',
  receivers: '^src/ingest/(http-receiver|grpc-receiver|admission|body|content-decoder|zstd-frames|decode-bounded|export-request)[.]ts$',
  exporter: '^src/exporter/',
  api: '^src/api/',
  mcp: '^src/mcp/',
  erasure: '^src/erasure/',
  console: '^src/console/',
  composition: '^src/open-store[.]ts$',
  cassettes: '^src/cassettes/',
  diff: '^src/diff/',
  recall: `^src/recall/(?!(${RECALL_INDEX})[.]ts$)`,
  replay: '^src/replay/',
  runs: '^src/runs/',
  ingest: '^src/ingest/(ingest|write-spans|arrival)[.]ts$',
  derive: '^src/derive/',
  tapes: '^src/tapes/',
  recallIndex: `^src/recall/(${RECALL_INDEX})[.]ts$`,
  pricing: '^src/pricing/',
  payloads: '^src/payloads/',
  normalize: '^src/normalize/',
  store: '^src/store/',
  http: '^src/http/',
  auth: '^src/auth/',
  // metrics/: every layer counts into the process's registry; it imports only prom-client and hono
  shared: '^src/(spans|json|otlp|deadline|metrics)/|^src/(config|errors|logger|package-root|wasm-module)[.]ts$',
};

const BASE = ['pricing', 'payloads', 'normalize', 'http', 'auth', 'store', 'shared'];
const READ = ['tapes', 'recallIndex', ...BASE];

/** What each layer may import, besides itself and packages. */
const MAY_IMPORT = {
  entry: Object.keys(LAYERS),
  receivers: ['ingest', 'http', 'auth', 'shared'],
  exporter: ['ingest', 'composition', 'shared'],
  // ingest: a fork's calls are recorded through the ingest path, like an exporter's spans
  api: ['composition', 'ingest', 'cassettes', 'mcp', 'erasure', 'diff', 'recall', 'replay', 'runs', ...READ],
  // No replay: a model under test that could create a replay would let stored telemetry
  // choose which recording its next run is fed (docs/mcp.md).
  mcp: ['diff', 'recall', 'runs', ...READ],
  // Erasure deletes what the read side reads (tapes/, recall's index, payloads) and tells
  // replay/ of it through the interface replay declares; nothing below imports it.
  erasure: ['replay', ...READ],
  // the console's files only: its page reads the API over HTTP, like any client; auth/ for
  // its routes' auth decision
  console: ['auth', 'shared'],
  composition: ['ingest', 'derive', ...READ],
  // a cassette is a portable copy of stored tapes: it reads and writes the tapes layer only;
  // replaying one is wired by the entry layer (cli/, testing/), not by importing replay/
  cassettes: READ,
  diff: READ,
  recall: READ,
  replay: READ,
  runs: READ,
  ingest: ['derive', ...READ],
  derive: READ,
  tapes: ['recallIndex', ...BASE],
  recallIndex: BASE,
  pricing: ['normalize', 'shared'],
  payloads: ['normalize', 'store', 'shared'],
  normalize: ['shared'],
  // HTTP helpers shared by the API, the OTLP receiver and replay (an unavailable database or
  // payload store is a 503)
  http: ['payloads', 'store', 'shared'],
  // Credentials, tenant access and the audit log: the database port to look credentials up
  // and write audit rows; nothing that reads tapes.
  auth: ['store', 'shared'],
  store: ['shared'],
  shared: [],
};

const pathOf = (names) => names.map((n) => LAYERS[n]).join('|');

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle in src/: modules that need each other belong in one module or one layer.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to no file.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'routes-from-the-http-app',
      severity: 'error',
      comment:
        "A feature's HTTP routes are mounted by api/ (or its own index.ts); what the CLI or another module needs from one belongs in a module of its own.",
      from: { path: '^src/', pathNot: '^src/(api/|server[.]ts$|[^/]+/index[.]ts$)' },
      to: { path: '^src/[^/]+/routes[.]ts$' },
    },
    {
      name: 'src-not-to-test',
      severity: 'error',
      comment: 'src/ stands alone: it imports nothing from test/, bench/ or scripts/.',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  allowed: [
    { comment: 'packages and Node built-ins', from: { path: '^src/' }, to: { pathNot: '^src/' } },
    ...Object.entries(MAY_IMPORT).map(([layer, below]) => ({
      comment: `${layer} imports ${['itself', ...below].join(', ')}`,
      from: { path: LAYERS[layer] },
      to: { path: pathOf([layer, ...below]) },
    })),
  ],
  allowedSeverity: 'error',
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
