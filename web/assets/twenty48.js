// 2048 in the page: the rules (to play and to show the engine's moves) and a widget with
// a board, arrow keys and buttons, a hint (the engine's move and every move's value) and
// auto-play (the engine plays, a move a request). The service checks every board it is
// sent; the rules here only keep the game going between requests.

import { isTerminal } from './client.js';

export const MOVES = ['up', 'down', 'left', 'right'];

/** One line slid toward its start: each tile merges at most once. */
function slideLine(line) {
  const tiles = line.filter((v) => v !== 0);
  const out = [];
  let gained = 0;
  for (let i = 0; i < tiles.length; i += 1) {
    if (i + 1 < tiles.length && tiles[i] === tiles[i + 1]) {
      out.push(2 * tiles[i]);
      gained += 2 * tiles[i];
      i += 1;
    } else {
      out.push(tiles[i]);
    }
  }
  while (out.length < line.length) out.push(0);
  return { line: out, gained };
}

/** The cells of each line toward `dir`, first cell first. */
function lines(rows, cols, dir) {
  const all = [];
  const vertical = dir === 'up' || dir === 'down';
  for (let a = 0; a < (vertical ? cols : rows); a += 1) {
    const line = [];
    for (let b = 0; b < (vertical ? rows : cols); b += 1) {
      const [r, c] = vertical ? [b, a] : [a, b];
      line.push(r * cols + c);
    }
    if (dir === 'down' || dir === 'right') line.reverse();
    all.push(line);
  }
  return all;
}

/** `cells` after moving toward `dir`: `{cells, gained, moved}`. */
export function slide(cells, rows, cols, dir) {
  const next = cells.slice();
  let gained = 0;
  for (const line of lines(rows, cols, dir)) {
    const slid = slideLine(line.map((i) => cells[i]));
    slid.line.forEach((v, k) => { next[line[k]] = v; });
    gained += slid.gained;
  }
  return { cells: next, gained, moved: next.some((v, i) => v !== cells[i]) };
}

export function legalMoves(cells, rows, cols) {
  return MOVES.filter((dir) => slide(cells, rows, cols, dir).moved);
}

/** A 2 (nine times in ten) or a 4 on an empty cell chosen at random. */
export function spawn(cells, random = Math.random) {
  const empty = cells.flatMap((v, i) => (v === 0 ? [i] : []));
  if (!empty.length) return cells;
  const next = cells.slice();
  next[empty[Math.floor(random() * empty.length)]] = random() < 0.9 ? 2 : 4;
  return next;
}

export function newGame(rows = 4, cols = 4, random = Math.random) {
  return spawn(spawn(new Array(rows * cols).fill(0), random), random);
}

const ARROWS = { ArrowUp: 'up', ArrowDown: 'down', ArrowLeft: 'left', ArrowRight: 'right' };
const SYMBOLS = { up: '↑', down: '↓', left: '←', right: '→' };

function button(text, className) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = className;
  b.textContent = text;
  return b;
}

/**
 * A 2048 board in `element`, played by hand (arrow keys or buttons) or by the engine.
 * `client` is a client of the service; options: `rows`, `cols` (4), `algorithm`
 * (default: the service's), `msPerMove` (each hint's time, 100). Returns `{hint(),
 * play(dir), autoPlay(), stop(), newGame(), state()}`; `hint()` resolves with the
 * service's answer: `{move, value, move_values, depth, exact}`.
 */
export function createTwenty48(element, { client, rows = 4, cols = 4, algorithm, msPerMove = 100 } = {}) {
  const root = document.createElement('div');
  root.className = 'pz-2048';
  root.tabIndex = 0;
  root.setAttribute('aria-label', '2048 board: arrow keys move the tiles');
  const grid = document.createElement('div');
  grid.className = 'pz-2048-grid';
  grid.style.gridTemplateColumns = `repeat(${cols}, minmax(0, 1fr))`;
  const info = document.createElement('p');
  info.className = 'pz-2048-info';
  info.setAttribute('aria-live', 'polite');
  const advice = document.createElement('p');
  advice.className = 'pz-2048-advice';
  const controls = document.createElement('div');
  controls.className = 'pz-2048-controls';
  const moveButtons = MOVES.map((dir) => {
    const b = button(SYMBOLS[dir], 'pz-2048-move');
    b.dataset.dir = dir;
    b.setAttribute('aria-label', `move ${dir}`);
    b.addEventListener('click', () => play(dir));
    return b;
  });
  const hintButton = button('Hint', 'pz-2048-hint');
  const autoButton = button('Auto-play', 'pz-2048-auto');
  const newButton = button('New game', 'pz-2048-new');
  controls.append(...moveButtons, hintButton, autoButton, newButton);
  root.append(grid, info, controls, advice);
  element.replaceChildren(root);

  let game = { cells: newGame(rows, cols), score: 0, moves: 0 };
  let auto = null;

  function render() {
    grid.replaceChildren(...game.cells.map((v) => {
      const cell = document.createElement('div');
      cell.className = 'pz-2048-cell';
      cell.dataset.value = String(v);
      cell.textContent = v ? String(v) : '';
      return cell;
    }));
    const over = legalMoves(game.cells, rows, cols).length === 0;
    info.textContent = `Score ${game.score} · ${game.moves} moves · largest tile ${Math.max(...game.cells)}${over ? ' · game over' : ''}`;
    root.dataset.over = String(over);
  }

  function play(dir) {
    const slid = slide(game.cells, rows, cols, dir);
    if (!slid.moved) return false;
    game = { cells: spawn(slid.cells), score: game.score + slid.gained, moves: game.moves + 1 };
    render();
    return true;
  }

  async function hint() {
    const request = { puzzle: { type: '2048', rows, cols, cells: game.cells }, limits: { timeout_ms: msPerMove } };
    if (algorithm) request.algorithm = algorithm;
    let job = await client.solveNow(request);
    if (!isTerminal(job.status)) job = await client.follow(job.id);
    const answer = job.result;
    const values = Object.entries(answer.move_values)
      .sort((a, b) => b[1] - a[1])
      .map(([dir, v]) => `${SYMBOLS[dir]} ${dir} ${Number(v).toFixed(answer.exact ? 4 : 0)}`);
    advice.textContent = answer.move
      ? `Best: ${answer.move} (${answer.algorithm}, depth ${answer.depth}${answer.exact ? ', exact' : ''}) · ${values.join(' · ')}`
      : 'No move: the game is over.';
    advice.dataset.move = answer.move ?? '';
    return answer;
  }

  function stop() {
    auto = null;
    autoButton.textContent = 'Auto-play';
  }

  async function autoPlay() {
    const run = {};
    auto = run;
    autoButton.textContent = 'Stop';
    try {
      while (auto === run) {
        const answer = await hint();
        if (auto !== run || !answer.move) break;
        play(answer.move);
      }
    } catch (error) {
      advice.textContent = error.message;
    } finally {
      if (auto === run) stop();
    }
  }

  hintButton.addEventListener('click', () => hint().catch((error) => { advice.textContent = error.message; }));
  autoButton.addEventListener('click', () => (auto ? stop() : autoPlay()));
  newButton.addEventListener('click', () => {
    stop();
    game = { cells: newGame(rows, cols), score: 0, moves: 0 };
    advice.textContent = '';
    render();
  });
  root.addEventListener('keydown', (event) => {
    const dir = ARROWS[event.key];
    if (!dir) return;
    event.preventDefault();
    play(dir);
  });
  render();
  return {
    hint,
    play,
    autoPlay,
    stop,
    newGame: () => newButton.click(),
    state: () => ({ ...game, cells: game.cells.slice() }),
  };
}
