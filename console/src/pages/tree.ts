/**
 * The run tree as a node graph: the run's root (found by following parent runs up) and every
 * run it started, children in start order, laid out by dagre and drawn as SVG. Each node is
 * a link to that run's tape; the same tree follows as a nested list for keyboards and
 * screen readers.
 */
import dagre from '@dagrejs/dagre';
import { api, runPath } from '../api.js';
import { h, replaceChildren, svg } from '../dom.js';
import type { PageContext } from '../main.js';
import type { Reconstruction, Tree, TreeNode } from '../types.js';

const NODE_WIDTH = 230;
const NODE_HEIGHT = 64;
/** Parent links followed up from the run asked for, at most. */
const MAX_ANCESTORS = 16;

export async function showTree({ main, segments, signal }: PageContext): Promise<void> {
  const run = segments[1];
  document.title = `Tree of ${run} · tapedeck`;
  // Parents: walk up to the root, so the page shows where this run sits.
  const ancestors: string[] = [];
  let root = run;
  for (let i = 0; i < MAX_ANCESTORS; i++) {
    const facts = await api<Reconstruction>(`/v1/runs/${runPath(root)}/reconstruct`, { signal });
    if (!facts.parent_run || ancestors.includes(facts.parent_run) || facts.parent_run === run) break;
    ancestors.push(facts.parent_run);
    root = facts.parent_run;
  }
  const tree = await api<Tree>(`/v1/runs/${runPath(root)}/tree`, { signal });

  replaceChildren(
    main,
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: '#/' }, 'Runs'),
      ' / ',
      h('a', { href: `#/runs/${runPath(run)}` }, run),
      ' / ',
    ),
    h('h1', null, 'Run tree'),
    h(
      'p',
      null,
      `${tree.run_count} run${tree.run_count === 1 ? '' : 's'} under `,
      h('a', { href: `#/runs/${runPath(root)}` }, root),
      root === run ? '' : ` (${run} is ${ancestors.length} level${ancestors.length === 1 ? '' : 's'} down)`,
      '. Select a node to open its tape.',
    ),
    tree.truncated
      ? h('p', { class: 'warning' }, `Part of the tree is left out (limits: ${tree.truncated_by.join(', ')}).`)
      : null,
    h('div', { class: 'graph-frame' }, graph(tree.root, run)),
    h('h2', null, 'As a list'),
    h('ul', { class: 'tree-list' }, listItem(tree.root, run)),
  );
}

function walk(
  node: TreeNode,
  visit: (node: TreeNode, parent: TreeNode | null) => void,
  parent: TreeNode | null = null,
): void {
  visit(node, parent);
  for (const child of node.children) walk(child, visit, node);
}

function graph(root: TreeNode, current: string): SVGElement {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 56, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  const nodes = new Map<string, TreeNode>();
  // Siblings left to right in start order (the API's order): dagre's ordering constraints.
  const constraints: { left: string; right: string }[] = [];
  walk(root, (node, parent) => {
    nodes.set(node.run, node);
    g.setNode(node.run, { width: NODE_WIDTH, height: NODE_HEIGHT });
    if (parent) g.setEdge(parent.run, node.run);
    node.children.forEach((child, i) => {
      if (i > 0) constraints.push({ left: node.children[i - 1].run, right: child.run });
    });
  });
  dagre.layout(g, { constraints });
  const { width = 0, height = 0 } = g.graph();
  const picture = svg('svg', {
    class: 'graph',
    viewBox: `0 0 ${width} ${height}`,
    width: Math.ceil(width),
    height: Math.ceil(height),
    role: 'group',
    'aria-label': 'Run tree graph',
  });
  for (const e of g.edges()) {
    const points = g.edge(e).points ?? [];
    picture.append(
      svg('polyline', {
        class: 'edge',
        points: points.map((p: { x: number; y: number }) => `${p.x},${p.y}`).join(' '),
      }),
    );
  }
  for (const id of g.nodes()) {
    const place = g.node(id);
    const node = nodes.get(id)!;
    const x = place.x - NODE_WIDTH / 2;
    const y = place.y - NODE_HEIGHT / 2;
    const failed = node.outcome === 'failure' || node.status === 'error';
    picture.append(
      svg(
        'a',
        {
          href: `#/runs/${runPath(id)}`,
          class: `node${id === current ? ' current' : ''}${failed ? ' failed' : ''}`,
          'aria-label': `run ${id}`,
        },
        svg('rect', { x, y, width: NODE_WIDTH, height: NODE_HEIGHT, rx: 8 }),
        svg('text', { x: x + 10, y: y + 22, class: 'node-title' }, clip(id, 28)),
        svg(
          'text',
          { x: x + 10, y: y + 42, class: 'node-detail' },
          `${node.status} · ${node.model_calls} model call${node.model_calls === 1 ? '' : 's'}`,
        ),
        svg('text', { x: x + 10, y: y + 57, class: 'node-detail' }, clip(node.model ?? 'no model', 30)),
        svg('title', null, `${id}: ${node.status} (${node.status_reason})`),
      ),
    );
  }
  return picture;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function listItem(node: TreeNode, current: string): HTMLElement {
  return h(
    'li',
    null,
    h('a', { href: `#/runs/${runPath(node.run)}`, 'aria-current': node.run === current ? 'page' : null }, node.run),
    ` — ${node.status}, ${node.model_calls} model call${node.model_calls === 1 ? '' : 's'}`,
    node.children_truncated ? ' (some children left out)' : '',
    node.children.length
      ? h(
          'ul',
          null,
          node.children.map((c) => listItem(c, current)),
        )
      : null,
  );
}
