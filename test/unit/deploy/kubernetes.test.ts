/**
 * The Kubernetes manifests and the load-balancing Collector configuration (deploy/kubernetes/),
 * checked without a cluster: every document is parsed, and every place where one names
 * another (labels and selectors, port names, the headless Service the Collector resolves, the
 * ConfigMap the Collector mounts, the Secret's keys) is checked against the other and against
 * tapedeck's own configuration: the Deployment's environment goes through the real
 * `loadConfig`, so a setting tapedeck would reject fails here.
 *
 * Not covered: that a cluster accepts them. `kubectl apply -k deploy/kubernetes --dry-run=server`
 * and the collector's `validate` command do that where a cluster and Docker are (docs/deploy.md).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig, settings } from '../../../src/config.js';
import { readRepoFile, readYaml, repoRoot, splitHostPort } from './deploy-files.js';

const DIR = 'deploy/kubernetes';

// manifests are read loosely, as kubectl reads YAML
type Doc = any;

function documentsOf(file: string): Doc[] {
  return parseAllDocuments(readRepoFile(path.join(DIR, file))).map((d) => {
    expect(d.errors, file).toEqual([]);
    return d.toJS();
  });
}

const kustomization = readYaml<Doc>(path.join(DIR, 'kustomization.yaml'));
const resources: Doc[] = (kustomization.resources as string[]).flatMap(documentsOf);
const secret = documentsOf('secret.example.yaml')[0];
const find = (kind: string, name: string) => {
  const found = resources.find((r) => r.kind === kind && r.metadata.name === name);
  expect(found, `${kind} ${name}`).toBeDefined();
  return found;
};

const tapedeck = find('Deployment', 'tapedeck');
const service = find('Service', 'tapedeck');
const headless = find('Service', 'tapedeck-headless');
const pdb = find('PodDisruptionBudget', 'tapedeck');
const collector = find('Deployment', 'otel-collector');
const collectorService = find('Service', 'otel-collector');
const tapedeckPod = tapedeck.spec.template;
const tapedeckContainer = tapedeckPod.spec.containers[0];
const generated = kustomization.configMapGenerator[0];
const collectorConfigFile = String(generated.files[0]).split('=')[1];
const collectorConfig = readYaml<Doc>(path.join(DIR, collectorConfigFile));

const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);
const containerPort = (container: Doc, name: string): number =>
  container.ports.find((p: Doc) => p.name === name)?.containerPort;

/**
 * The Deployment's environment, Secret references filled from the example Secret, the pod's
 * IP as an example address, and $(NAME) references expanded as the kubelet does.
 */
function environmentOfTapedeck(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of tapedeckContainer.env) {
    if (e.value !== undefined) env[e.name] = String(e.value).replace(/\$\(([A-Z_]+)\)/g, (_, name) => env[name] ?? '');
    else if (e.valueFrom.fieldRef) {
      expect(e.valueFrom.fieldRef.fieldPath, e.name).toBe('status.podIP');
      env[e.name] = '10.0.0.7';
    } else {
      const ref = e.valueFrom.secretKeyRef;
      expect(ref.name, e.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData), `${e.name} names a key of the Secret`).toContain(ref.key);
      env[e.name] = secret.stringData[ref.key];
    }
  }
  return env;
}

describe('deploy/kubernetes', () => {
  it('lists files that exist, all in one namespace', () => {
    for (const file of [...kustomization.resources, collectorConfigFile, 'secret.example.yaml'])
      expect(existsSync(path.join(repoRoot, DIR, file)), file).toBe(true);
    for (const r of [...resources.filter((r) => r.kind !== 'Namespace'), secret])
      expect(r.metadata.namespace, `${r.kind} ${r.metadata.name}`).toBe(kustomization.namespace);
    expect(find('Namespace', kustomization.namespace)).toBeDefined();
  });

  it('selects the tapedeck pods from the Deployment, both Services and the PodDisruptionBudget', () => {
    const labels = tapedeckPod.metadata.labels;
    for (const selector of [tapedeck.spec.selector.matchLabels, pdb.spec.selector.matchLabels])
      expect(matches(selector, labels)).toBe(true);
    for (const s of [service, headless]) expect(matches(s.spec.selector, labels), s.metadata.name).toBe(true);
    expect(matches(collectorService.spec.selector, labels)).toBe(false);
    expect(tapedeck.spec.replicas).toBeGreaterThan(1);
    // a drain never takes every replica at once
    expect(pdb.spec.maxUnavailable).toBeLessThan(tapedeck.spec.replicas);
  });

  it('runs a configuration tapedeck accepts: every replica on one database and one shared payload store', () => {
    const env = environmentOfTapedeck();
    const known = new Set<string>(settings.map((s) => s.env));
    for (const name of Object.keys(env).filter((n) => n.startsWith('TAPEDECK_')))
      expect(known.has(name), `${name} is a tapedeck setting`).toBe(true);
    const config = loadConfig(env);
    expect(config.databaseUrl).toMatch(/^postgres:\/\//);
    // fs payloads are one pod's own; replicas must share them
    expect(['s3', 'pg']).toContain(config.payloadStore);
    expect(config.host).toBe('0.0.0.0');
    expect(containerPort(tapedeckContainer, 'otlp-grpc')).toBe(config.grpcPort);
    expect(containerPort(tapedeckContainer, 'http')).toBe(config.httpPort);
    // the others forward replay calls to this pod's own address, on the HTTP port
    expect(config.replicaUrl).toBe(`http://10.0.0.7:${config.httpPort}`);
    // the drain ends before the kubelet's SIGKILL
    expect(tapedeckPod.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(config.shutdownGraceMs);
  });

  it('probes readiness on /readyz and liveness on /healthz, on the HTTP port', () => {
    expect(tapedeckContainer.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(tapedeckContainer.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    const prometheusPort = Number(tapedeckPod.metadata.annotations['prometheus.io/port']);
    expect(prometheusPort).toBe(containerPort(tapedeckContainer, 'http'));
    expect(tapedeckPod.metadata.annotations['prometheus.io/path']).toBe('/metrics');
  });

  it('gives the Collector a headless Service to resolve, on the replicas gRPC port', () => {
    expect(headless.spec.clusterIP).toBe('None');
    const dns = collectorConfig.exporters.loadbalancing.resolver.dns;
    expect(dns.hostname).toBe(`${headless.metadata.name}.${headless.metadata.namespace}.svc.cluster.local`);
    const grpcPort = headless.spec.ports.find((p: Doc) => p.targetPort === 'otlp-grpc');
    expect(grpcPort.port).toBe(dns.port);
    expect(dns.port).toBe(containerPort(tapedeckContainer, 'otlp-grpc'));
  });

  it('routes traces and log records by trace id through the loadbalancing exporter', () => {
    const exporter = collectorConfig.exporters.loadbalancing;
    expect(exporter.routing_key).toBe('traceID');
    expect(exporter.protocol.otlp.retry_on_failure.enabled).toBe(true);
    for (const signal of ['traces', 'logs']) {
      const pipeline = collectorConfig.service.pipelines[signal];
      expect(pipeline.exporters, signal).toEqual(['loadbalancing']);
      expect(pipeline.receivers, signal).toEqual(['otlp']);
    }
  });

  it('mounts the generated ConfigMap where the Collector reads its configuration', () => {
    const container = collector.spec.template.spec.containers[0];
    const volume = collector.spec.template.spec.volumes.find((v: Doc) => v.configMap);
    expect(volume.configMap.name).toBe(generated.name);
    expect(kustomization.generatorOptions.disableNameSuffixHash).toBe(true);
    const mount = container.volumeMounts.find((m: Doc) => m.name === volume.name);
    const configArg = container.args.find((a: string) => a.startsWith('--config='))?.slice('--config='.length);
    expect(configArg).toBe(path.posix.join(mount.mountPath, volume.configMap.items[0].path));
    expect(volume.configMap.items[0].key).toBe(String(generated.files[0]).split('=')[0]);
    // the Collector listens where its Service and probes send
    const { grpc, http } = collectorConfig.receivers.otlp.protocols;
    expect(splitHostPort(grpc.endpoint).port).toBe(containerPort(container, 'otlp-grpc'));
    expect(splitHostPort(http.endpoint).port).toBe(containerPort(container, 'otlp-http'));
    expect(splitHostPort(collectorConfig.extensions.health_check.endpoint).port).toBe(
      containerPort(container, 'health'),
    );
    expect(collectorConfig.service.extensions).toContain('health_check');
    for (const p of collectorService.spec.ports) expect(containerPort(container, p.targetPort)).toBe(p.port);
  });
});
