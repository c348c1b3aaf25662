// What a job is doing and what it found: status, live progress, an outcome in plain words,
// statistics, and the player. Shared by the page and the embeddable widget. Every field
// is in the layout from the start, so nothing moves while progress updates.

import { createPlayer } from './player.js';

const number = (n) => (n === null || n === undefined ? '—' : Number(n).toLocaleString('en'));

function seconds(ms) {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${Number(ms).toFixed(ms < 10 ? 3 : 1)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

const EXHAUSTED = {
  node_limit: (r) =>
    `The search stopped at its node limit after expanding ${number(r.nodes_expanded)} nodes without finding a solution. Raise the node limit, or ask for any solution instead of an optimal one.`,
  timeout: (r) =>
    `The search ran out of time after ${seconds(r.elapsed_ms)} without finding a solution. Allow more time, or ask for any solution instead of an optimal one.`,
  memory_limit: () =>
    'The search filled the memory a job may use without finding a solution. IDA* stores almost nothing; a stronger heuristic also helps.',
  gave_up: (r) =>
    `The search gave up: ${r.algorithm || 'this algorithm'} is not complete and ran out of moves that looked better. A* or IDA* will search everything.`,
};

/** One sentence on where `job` is, for people. */
export function describeOutcome(job) {
  const r = job.result || {};
  switch (job.status) {
    case 'queued':
      return 'Waiting for a free worker…';
    case 'running':
      return 'Searching…';
    case 'solved': {
      const pushes = r.pushes === undefined ? '' : `, ${number(r.pushes)} pushes`;
      const proof = r.optimal ? 'proved optimal' : 'not proved optimal';
      return `Solved in ${number(r.length)} moves${pushes}, ${proof}.`;
    }
    case 'unsolvable':
      return job.request?.puzzle?.type === 'sliding'
        ? 'This board cannot reach its goal: half of all arrangements of a sliding puzzle cannot, whatever the moves.'
        : 'This level has no solution: the search tried every position the boxes can reach.';
    case 'exhausted':
      return (EXHAUSTED[job.reason] || EXHAUSTED.node_limit)(r);
    case 'cancelled':
      return `Cancelled after ${number(r.nodes_expanded ?? job.progress?.nodes_expanded ?? 0)} nodes.`;
    case 'failed':
      return `The service failed while solving: ${job.error || 'no reason given'}.`;
    default:
      return '';
  }
}

/** A `<dl>` of `labels` ({name: label}) and its value elements by name, each showing '—'. */
function fieldList(className, labels) {
  const list = document.createElement('dl');
  list.className = className;
  const values = {};
  for (const [name, label] of Object.entries(labels)) {
    const pair = document.createElement('div');
    const term = document.createElement('dt');
    term.textContent = label;
    values[name] = document.createElement('dd');
    values[name].dataset.field = name;
    values[name].textContent = '—';
    pair.append(term, values[name]);
    list.append(pair);
  }
  return [list, values];
}

/** A run view inside `container`; see the methods below. */
export function createRunView(container) {
  const root = document.createElement('div');
  root.className = 'pz-run';
  root.dataset.status = 'idle';
  const statusLine = document.createElement('p');
  statusLine.className = 'pz-status';
  statusLine.setAttribute('role', 'status');
  statusLine.textContent = 'Ready';
  const [progress, live] = fieldList('pz-progress', { nodes: 'Nodes', threshold: 'Threshold', elapsed: 'Elapsed' });
  const outcome = document.createElement('p');
  outcome.className = 'pz-outcome';
  outcome.setAttribute('aria-live', 'polite');
  const playerBox = document.createElement('div');
  const [stats, result] = fieldList('pz-stats', {
    length: 'Length',
    pushes: 'Pushes',
    expanded: 'Nodes expanded',
    generated: 'Nodes generated',
    unique: 'Unique states',
    time: 'Search time',
    optimal: 'Optimal',
    search: 'Algorithm',
  });
  root.append(statusLine, progress, outcome, playerBox, stats);
  container.append(root);
  const player = createPlayer(playerBox);

  function setStatus(status, text) {
    root.dataset.status = status;
    statusLine.textContent = text;
  }

  function showStats(r) {
    result.length.textContent = number(r?.length);
    result.pushes.textContent = number(r?.pushes);
    result.expanded.textContent = number(r?.nodes_expanded);
    result.generated.textContent = number(r?.nodes_generated);
    result.unique.textContent = r && r.unique_states === null ? 'none stored (IDA*)' : number(r?.unique_states);
    result.time.textContent = seconds(r?.elapsed_ms);
    result.optimal.textContent = r ? (r.optimal ? 'yes, proved' : 'not proved') : '—';
    result.search.textContent = r ? `${r.algorithm}, ${r.heuristic}` : '—';
  }

  return {
    element: root,
    player,
    /** Shows `puzzle` (a request's `puzzle`) before any job. */
    reset(puzzle) {
      setStatus('idle', 'Ready');
      outcome.textContent = '';
      this.progress({});
      showStats(null);
      player.load(puzzle);
    },
    /** Shows a job that is queued or running, or has just changed. */
    status(job) {
      setStatus(job.status, `Job ${job.id}: ${job.status}`);
      outcome.textContent = describeOutcome(job);
      if (job.progress) this.progress(job.progress);
    },
    progress(p) {
      live.nodes.textContent = number(p.nodes_expanded);
      live.threshold.textContent = number(p.threshold);
      live.elapsed.textContent = seconds(p.elapsed_ms);
    },
    /** Shows a finished job; a solution is loaded into the player. */
    finished(job) {
      this.status(job);
      showStats(job.result);
      // The final numbers, in the same fields the live ones had.
      if (job.result) this.progress(job.result);
      player.load(job.request.puzzle, job.status === 'solved' ? job.result.plan : '');
    },
    /** Shows an error that no form field owns. */
    error(message) {
      setStatus('error', 'Error');
      outcome.textContent = message;
    },
  };
}
