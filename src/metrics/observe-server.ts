/**
 * @module metrics/observe-server
 * The gauges of one serve process that are read from their source when scraped: ingest's work
 * units and the database pool. Each source is handed in as a small
 * reading function, so this module knows none of them.
 */
import { type Metrics, observeGauge } from './metrics.js';

export interface ServerSources {
  /** admission's work units taken and wanted */
  workUnits(): { inUse: number; waiting: number };
  /** the pool's connections, where there is a pool */
  pool?(): { max: number; open: number; idle: number; waiting: number };
}

export function observeServer(metrics: Metrics, sources: ServerSources): void {
  observeGauge(
    metrics,
    {
      name: 'tapedeck_work_units',
      help: 'Export work units (ingest/admission.ts): in_use by requests in their turn, waiting for requests queued for one.',
      labelNames: ['state'],
    },
    () => {
      const units = sources.workUnits();
      return [
        { labels: { state: 'in_use' }, value: units.inUse },
        { labels: { state: 'waiting' }, value: units.waiting },
      ];
    },
  );
  const pool = sources.pool;
  if (pool) {
    observeGauge(
      metrics,
      {
        name: 'tapedeck_db_pool_connections',
        help: 'Database pool connections by state: max (the bound), open, idle, and callers waiting for one.',
        labelNames: ['state'],
      },
      () => {
        const p = pool();
        return [
          { labels: { state: 'max' }, value: p.max },
          { labels: { state: 'open' }, value: p.open },
          { labels: { state: 'idle' }, value: p.idle },
          { labels: { state: 'waiting' }, value: p.waiting },
        ];
      },
    );
  }
}
