// puzzled in any web page: an ES module served at /embed.js.
//
//   import { solve, mount } from 'https://puzzled.example/embed.js';
//   const job = await solve({ type: 'sliding', tiles: [8, 6, 7, 2, 5, 4, 3, 0, 1] },
//                           { onProgress: (p) => console.log(p.nodes_expanded), signal });
//   mount(document.querySelector('#solver'), { puzzle: { type: 'sokoban', level: '…' } });
//   const { result } = await generate({ width: 8, height: 8, boxes: 3, difficulty: 'hard' });
//   result.levels[0].level;   // XSB, with .plan, .pushes, .optimal, .score, .label
//   const { move, move_values } = await hint2048([2, 4, 0, 0, …16 tiles…]);
//   mount2048(document.querySelector('#game'));   // a board to play, with hint and auto-play
//
// From another origin, the service must list that origin in `--cors-origin`.

import { createClient, generateRequest, isTerminal as isTerminalStatus, jobRequest } from './assets/client.js';
import { createRunView } from './assets/view.js';
import { createTwenty48 } from './assets/twenty48.js';

export { createClient, generateRequest, jobRequest, ProblemError, isTerminal } from './assets/client.js';
export { createRunView, describeOutcome } from './assets/view.js';
export { createPlayer } from './assets/player.js';
export { createBoard } from './assets/board.js';
export { model, slidingGoal, slidingSolvable, shuffledSliding, slideTile } from './assets/puzzles.js';
export { createTwenty48, legalMoves, newGame, slide, spawn } from './assets/twenty48.js';

/**
 * Solves `puzzle` (`{type: 'sliding', tiles, cols?, goal?}` or `{type: 'sokoban', level}`)
 * and resolves with the finished job, whatever its status. Options: `baseUrl` (default:
 * where this module came from), `algorithm`, `heuristic`, `partition`, `objective`,
 * `weight`, `limits: {max_nodes, timeout_ms}`, `onStatus(job)`, `onProgress(progress)`,
 * `signal`: aborting it cancels the job and rejects with an AbortError, and `apiKey` for a
 * service with keys on (a key in a public page is public: give such a page a key of its own).
 * A request the service refuses rejects with a ProblemError (`.problem.pointer` names the field).
 */
export function solve(puzzle, options = {}) {
  return createClient(options.baseUrl, { apiKey: options.apiKey }).run(jobRequest(puzzle, options), options);
}

/**
 * Makes new Sokoban levels and resolves with the finished job: `job.result.levels`, each
 * with its XSB `level`, a replayed `plan`, `pushes` (proved optimal when `optimal`), a
 * difficulty `score` and `label`, its `features` and the `seed` that makes it again.
 * Options: `width`, `height` (5 to 16, walls included; default 8), `boxes` (default 3),
 * `difficulty` (`easy`, `medium`, `hard`), `method` (`reverse`, `murase`), `count`
 * (default 1), `seed`, `limits`, and `baseUrl`, `apiKey`, `onStatus`, `onProgress`
 * (`{levels_made, candidates_tried, …}`) and `signal` as `solve` takes them. A job that
 * stops short (its time limit, a cancel) still carries the levels made until then.
 */
export function generate(options = {}) {
  return createClient(options.baseUrl, { apiKey: options.apiKey }).run(generateRequest(options), options);
}

/**
 * The engine's answer for a 2048 position (`cells`, tile values row by row, 0 for
 * empty): `{move, value, move_values, depth, exact, …}`, `move` null when the game is
 * over. Options: `rows`, `cols` (4), `algorithm` (`expectimax`, `best-first`, `exact`,
 * `greedy`), `objective` (`'score'` or `{reach: 2048}`), `limits` (e.g. `{timeout_ms:
 * 100}`), and `baseUrl`, `apiKey`.
 */
export async function hint2048(cells, options = {}) {
  const { rows = 4, cols = 4 } = options;
  const client = createClient(options.baseUrl, { apiKey: options.apiKey });
  let job = await client.solveNow(jobRequest({ type: '2048', rows, cols, cells }, options));
  if (!isTerminalStatus(job.status)) job = await client.follow(job.id, options);
  return job.result;
}

// The widget's look comes with it, once per document.
function linkStyleSheet() {
  const href = new URL('./assets/player.css', import.meta.url).href;
  if ([...document.querySelectorAll('link[rel="stylesheet"]')].some((link) => link.href === href)) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = href;
  document.head.append(link);
}

/**
 * Renders a solver for `puzzle` into `element`: the board, Solve and Cancel, live
 * progress, the outcome and a player. Takes the options of `solve`, plus `autoSolve`.
 * Returns `{solve(), cancel(), view}`; `solve()` resolves like the function above.
 */
export function mount(element, { puzzle, autoSolve = false, ...options } = {}) {
  linkStyleSheet();
  const widget = document.createElement('div');
  widget.className = 'pz-widget';
  const view = createRunView(widget);
  const actions = document.createElement('div');
  actions.className = 'pz-actions';
  const solveButton = document.createElement('button');
  solveButton.type = 'button';
  solveButton.className = 'pz-solve';
  solveButton.textContent = 'Solve';
  const cancelButton = document.createElement('button');
  cancelButton.type = 'button';
  cancelButton.className = 'pz-cancel';
  cancelButton.textContent = 'Cancel';
  cancelButton.disabled = true;
  actions.append(solveButton, cancelButton);
  widget.prepend(actions);
  element.replaceChildren(widget);
  view.reset(puzzle);

  let controller = null;
  async function run() {
    controller?.abort();
    controller = new AbortController();
    solveButton.disabled = true;
    cancelButton.disabled = false;
    try {
      const job = await solve(puzzle, {
        ...options,
        signal: controller.signal,
        onStatus: (job) => view.status(job),
        onProgress: (progress) => view.progress(progress),
      });
      view.finished(job);
      return job;
    } catch (error) {
      if (error.job) view.finished(error.job);
      else view.error(error.message);
      throw error;
    } finally {
      solveButton.disabled = false;
      cancelButton.disabled = true;
    }
  }
  // The button's own promise has nobody to tell; the view already shows what happened.
  solveButton.addEventListener('click', () => run().catch(() => {}));
  cancelButton.addEventListener('click', () => controller?.abort());
  if (autoSolve) run().catch(() => {});
  return { solve: run, cancel: () => controller?.abort(), view };
}

/**
 * Renders a 2048 board into `element`, to play with the arrow keys or buttons, with a
 * Hint (the engine's move and every move's value) and Auto-play (the engine plays).
 * Options: `rows`, `cols`, `algorithm`, `msPerMove` (each hint's time, 100), `baseUrl`,
 * `apiKey`. Returns `{hint(), play(dir), autoPlay(), stop(), newGame(), state()}`.
 */
export function mount2048(element, options = {}) {
  linkStyleSheet();
  const client = createClient(options.baseUrl, { apiKey: options.apiKey });
  return createTwenty48(element, { ...options, client });
}
