// Puzzle models in the browser: the boards a plan passes through, for playback, and the
// sliding-board helpers of the editor (goal, solvability, shuffle). The service stays
// the judge of what is valid; these only draw and replay what it accepted.

// ---- Sliding tiles: row-major tiles, 0 the blank; moves name where the blank goes.

const BLANK_STEPS = { u: [-1, 0], d: [1, 0], l: [0, -1], r: [0, 1] };

/** The goal tiles for a named goal (`blank-last`, `blank-first`) or a tile list. */
export function slidingGoal(cells, goal = 'blank-last') {
  if (Array.isArray(goal)) return goal.slice();
  const tiles = Array.from({ length: cells }, (_, i) => i);
  return goal === 'blank-first' ? tiles : [...tiles.slice(1), 0];
}

/**
 * Whether `goal` can be reached from `tiles`: a move swaps the blank with a tile, so the
 * permutation's parity and the blank's taxicab distance to its goal change together.
 */
export function slidingSolvable(tiles, cols, goal) {
  const where = new Map(goal.map((tile, cell) => [tile, cell]));
  const target = tiles.map((tile) => where.get(tile));
  let transpositions = 0;
  const seen = new Array(tiles.length).fill(false);
  for (let start = 0; start < tiles.length; start++) {
    let length = 0;
    for (let cell = start; !seen[cell]; cell = target[cell]) {
      seen[cell] = true;
      length++;
    }
    if (length > 0) transpositions += length - 1;
  }
  const from = tiles.indexOf(0);
  const to = goal.indexOf(0);
  const distance =
    Math.abs(Math.floor(from / cols) - Math.floor(to / cols)) + Math.abs((from % cols) - (to % cols));
  return transpositions % 2 === distance % 2;
}

/** A uniformly random board from which `goal` can be reached. */
export function shuffledSliding(cols, goal, random = Math.random) {
  const tiles = goal.slice();
  for (let i = tiles.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [tiles[i], tiles[j]] = [tiles[j], tiles[i]];
  }
  if (!slidingSolvable(tiles, cols, goal)) {
    // Swapping two tiles (not the blank) flips the parity: now it is solvable.
    const [a, b] = tiles.map((t, i) => (t === 0 ? -1 : i)).filter((i) => i >= 0);
    [tiles[a], tiles[b]] = [tiles[b], tiles[a]];
  }
  return tiles;
}

/** The board after sliding the tile at `cell` into the blank, or null when it is not next to it. */
export function slideTile(tiles, cols, cell) {
  const blank = tiles.indexOf(0);
  const rowDistance = Math.abs(Math.floor(blank / cols) - Math.floor(cell / cols));
  const colDistance = Math.abs((blank % cols) - (cell % cols));
  if (rowDistance + colDistance !== 1) return null;
  const next = tiles.slice();
  [next[blank], next[cell]] = [next[cell], next[blank]];
  return next;
}

function slidingStates(puzzle, plan) {
  const cols = puzzle.cols || Math.round(Math.sqrt(puzzle.tiles.length));
  const rows = puzzle.tiles.length / cols;
  const states = [puzzle.tiles.slice()];
  let tiles = states[0];
  for (const [index, move] of [...plan].entries()) {
    const step = BLANK_STEPS[move];
    const blank = tiles.indexOf(0);
    const row = Math.floor(blank / cols) + (step?.[0] ?? NaN);
    const col = (blank % cols) + (step?.[1] ?? NaN);
    if (!(row >= 0 && row < rows && col >= 0 && col < cols)) {
      throw new Error(`move ${index + 1} ('${move}') leaves the board`);
    }
    tiles = tiles.slice();
    const cell = row * cols + col;
    [tiles[blank], tiles[cell]] = [tiles[cell], 0];
    states.push(tiles);
  }
  return states;
}

// ---- Sokoban: XSB text, LURD plans (lower case moves, upper case pushes).

const SOKOBAN_STEPS = { u: [-1, 0], d: [1, 0], l: [0, -1], r: [0, 1] };

/**
 * Reads XSB (run-length counts and `|` row breaks too) into a grid. Lenient: it draws
 * what it can while the text is being typed; the service says what is wrong.
 */
function parseXsb(text) {
  const lines = [];
  for (const line of String(text).replace(/\r/g, '').split('\n')) {
    let row = '';
    let count = '';
    for (const c of line) {
      if (c >= '0' && c <= '9') {
        count += c;
      } else if (c === '|') {
        lines.push(row);
        row = '';
        count = '';
      } else {
        row += c.repeat(Math.min(Number(count || 1), 100));
        count = '';
      }
    }
    lines.push(row);
  }
  while (lines.length && !lines[lines.length - 1].trim()) lines.pop();
  while (lines.length && !lines[0].trim()) lines.shift();
  const rows = lines.length;
  const cols = Math.max(0, ...lines.map((l) => l.length));
  const cells = rows * cols;
  const level = { rows, cols, walls: new Array(cells).fill(false), goals: new Array(cells).fill(false), boxes: [], player: -1 };
  lines.forEach((line, r) => {
    [...line].forEach((c, col) => {
      const cell = r * cols + col;
      if (c === '#') level.walls[cell] = true;
      if (c === '.' || c === '*' || c === '+') level.goals[cell] = true;
      if (c === '$' || c === '*') level.boxes.push(cell);
      if ((c === '@' || c === '+') && level.player < 0) level.player = cell;
    });
  });
  level.inside = insideSquares(level);
  return level;
}

/** Squares the player could ever stand on or a box fill: a flood fill from the player. */
function insideSquares(level) {
  const inside = new Array(level.rows * level.cols).fill(false);
  const stack = level.player >= 0 ? [level.player] : [];
  while (stack.length) {
    const cell = stack.pop();
    if (inside[cell] || level.walls[cell]) continue;
    inside[cell] = true;
    const row = Math.floor(cell / level.cols);
    const col = cell % level.cols;
    for (const [dr, dc] of Object.values(SOKOBAN_STEPS)) {
      const r = row + dr;
      const c = col + dc;
      if (r >= 0 && r < level.rows && c >= 0 && c < level.cols) stack.push(r * level.cols + c);
    }
  }
  return inside;
}

function sokobanStates(level, plan) {
  // Each box keeps its index through the plan, so the view can animate it.
  let state = { player: level.player, boxes: level.boxes.slice() };
  const states = [state];
  for (const [index, move] of [...plan].entries()) {
    const step = SOKOBAN_STEPS[move.toLowerCase()];
    if (!step) throw new Error(`step ${index + 1} ('${move}') is not one of LURD`);
    const delta = step[0] * level.cols + step[1];
    const next = state.player + delta;
    const boxes = state.boxes.slice();
    const box = boxes.indexOf(next);
    if (level.walls[next]) throw new Error(`step ${index + 1} walks into a wall`);
    if (box >= 0) {
      const beyond = next + delta;
      if (level.walls[beyond] || boxes.includes(beyond)) throw new Error(`step ${index + 1} pushes a blocked box`);
      boxes[box] = beyond;
    }
    state = { player: next, boxes };
    states.push(state);
  }
  return states;
}

/**
 * A puzzle as the service's request names it, ready to draw and replay:
 * `{kind, rows, cols, states(plan)}` plus the kind's own fields.
 */
export function model(puzzle) {
  if (puzzle.type === 'sokoban') {
    const level = parseXsb(puzzle.level);
    return { kind: 'sokoban', ...level, states: (plan) => sokobanStates(level, plan) };
  }
  const cols = puzzle.cols || Math.round(Math.sqrt(puzzle.tiles.length));
  const goal = slidingGoal(puzzle.tiles.length, puzzle.goal ?? 'blank-last');
  return {
    kind: 'sliding',
    rows: puzzle.tiles.length / cols,
    cols,
    goal,
    states: (plan) => slidingStates({ ...puzzle, cols }, plan),
  };
}
