// The page at `/`: puzzle editors, search options from /v1/capabilities, a run view fed
// by the job's event stream, and recent jobs. Everything else comes from /embed.js.

import {
  createBoard,
  createClient,
  createRunView,
  createTwenty48,
  generateRequest,
  isTerminal,
  jobRequest,
  model,
  shuffledSliding,
  slideTile,
  slidingGoal,
  slidingSolvable,
} from '../embed.js';
import { SLIDING_PRESETS, SOKOBAN_SAMPLES } from './samples.js';

const $ = (selector) => document.querySelector(selector);
// The key stays in this tab only (sessionStorage), never in the page's address.
const API_KEY_ITEM = 'puzzled-api-key';
$('#api-key').value = sessionStorage.getItem(API_KEY_ITEM) || '';
const client = createClient(location.origin, { apiKey: () => $('#api-key').value.trim() });
const view = createRunView($('#run'));
createTwenty48($('#twenty48'), { client });
const form = $('#job-form');
let capabilities = null;
let controller = null;

// ---- Sliding editor: the tiles field is the truth; the board follows it.

const sliding = { rows: 3, cols: 3, goal: 'blank-last', tiles: slidingGoal(9) };
const slidingBoard = createBoard($('#sliding-board'), {
  label: 'sliding board editor',
  onCellClick: (cell) => {
    const next = slideTile(sliding.tiles, sliding.cols, cell);
    if (next) setTiles(next);
  },
});
let slidingModel = null;

function goalTiles() {
  return slidingGoal(sliding.rows * sliding.cols, sliding.goal);
}

function drawSliding() {
  const puzzle = { type: 'sliding', tiles: sliding.tiles, cols: sliding.cols, goal: sliding.goal };
  // One model per shape and goal, so tiles keep their elements and slide when clicked.
  const key = `${sliding.cols}|${sliding.tiles.length}|${goalTiles()}`;
  if (slidingModel?.key !== key) slidingModel = { ...model(puzzle), key };
  slidingBoard.show(slidingModel, sliding.tiles);
  $('#solvable').textContent = slidingSolvable(sliding.tiles, sliding.cols, goalTiles())
    ? 'This board can reach its goal.'
    : 'This board cannot reach its goal.';
}

function setTiles(tiles) {
  sliding.tiles = tiles;
  $('#tiles').value = tiles.join(' ');
  drawSliding();
}

function setShape(rows, cols) {
  sliding.rows = rows;
  sliding.cols = cols;
  $('#rows').value = String(rows);
  $('#cols').value = String(cols);
  fillPartitions();
}

function parseTiles() {
  return $('#tiles').value.trim().split(/[\s,]+/).filter(Boolean).map(Number);
}

// Draws only a whole board; the service explains anything else when asked to solve.
function onTilesInput() {
  const tiles = parseTiles();
  const sorted = tiles.slice().sort((a, b) => a - b);
  if (tiles.length === sliding.rows * sliding.cols && sorted.every((t, i) => t === i)) {
    sliding.tiles = tiles;
    drawSliding();
  }
}

function slidingPuzzle() {
  return { type: 'sliding', tiles: parseTiles(), cols: sliding.cols, goal: sliding.goal };
}

for (let side = 2; side <= 8; side++) {
  $('#rows').append(new Option(String(side), String(side)));
  $('#cols').append(new Option(String(side), String(side)));
}
SLIDING_PRESETS.forEach((preset, index) => $('#sliding-preset').append(new Option(preset.name, String(index))));
$('#sliding-preset').addEventListener('change', (event) => {
  const preset = SLIDING_PRESETS[Number(event.target.value)];
  if (!preset) return;
  setShape(preset.tiles.length / preset.cols, preset.cols);
  sliding.goal = preset.goal;
  $('#goal').value = preset.goal;
  setTiles(preset.tiles);
});
for (const id of ['#rows', '#cols']) {
  $(id).addEventListener('change', () => {
    setShape(Number($('#rows').value), Number($('#cols').value));
    setTiles(goalTiles());
  });
}
$('#goal').addEventListener('change', (event) => {
  sliding.goal = event.target.value;
  drawSliding();
});
$('#tiles').addEventListener('input', onTilesInput);
$('#shuffle').addEventListener('click', () => setTiles(shuffledSliding(sliding.cols, goalTiles())));
$('#sorted').addEventListener('click', () => setTiles(goalTiles()));

// ---- Sokoban editor.

const sokobanBoard = createBoard($('#sokoban-board'), { label: 'Sokoban level' });

function drawLevel() {
  const level = model({ type: 'sokoban', level: $('#level').value });
  sokobanBoard.show(level, { player: level.player, boxes: level.boxes });
}

SOKOBAN_SAMPLES.forEach((sample, index) => $('#sokoban-sample').append(new Option(sample.name, String(index))));
$('#sokoban-sample').addEventListener('change', (event) => {
  const sample = SOKOBAN_SAMPLES[Number(event.target.value)];
  if (!sample) return;
  $('#level').value = sample.level;
  drawLevel();
});
$('#level').addEventListener('input', () => {
  $('#rating').textContent = '';
  drawLevel();
});

/** One line on a level's difficulty, from the generator or /v1/rate. */
function describeRating(level) {
  const proof = level.optimal ? 'optimal' : 'not proved optimal';
  const f = level.features;
  return `${level.label} (score ${level.score.toFixed(1)}): ${level.pushes} pushes, ${proof}; ` +
    `${f.box_lines} box lines, ${f.box_changes} box changes` + (level.seed === undefined ? '' : `; seed ${level.seed}`);
}

/** Asks the service for a level of the chosen size, boxes and difficulty, and edits it. */
async function generateLevel() {
  if (controller) return;
  clearErrors();
  const [width, height] = $('#gen-size').value.split('x').map(Number);
  const request = generateRequest({
    width,
    height,
    boxes: Number($('#gen-boxes').value),
    difficulty: $('#gen-difficulty').value,
  });
  $('#generate').disabled = true;
  $('#cancel').disabled = false;
  $('#rating').textContent = 'Generating…';
  controller = new AbortController();
  const options = {
    signal: controller.signal,
    onProgress: (p) => {
      $('#rating').textContent = `Generating… ${p.candidates_tried ?? 0} candidates tried`;
    },
  };
  try {
    const job = await client.run(request, options);
    const level = job.result?.levels?.[0];
    if (!level) {
      $('#rating').textContent = `No level made (${job.status}${job.reason ? `: ${job.reason}` : ''}); try another difficulty or size.`;
      return;
    }
    $('#level').value = level.level;
    $('#sokoban-sample').value = '';
    drawLevel();
    view.reset(currentPuzzle());
    $('#rating').textContent = describeRating(level);
  } catch (error) {
    $('#rating').textContent = error.name === 'AbortError' ? 'Cancelled.' : '';
    if (error.problem) showProblem(error.problem);
    else if (error.name !== 'AbortError') view.error(error.message);
  } finally {
    $('#generate').disabled = false;
    $('#cancel').disabled = true;
    controller = null;
    refreshRecent();
  }
}
$('#generate').addEventListener('click', generateLevel);

// ---- Search options, from /v1/capabilities.

const puzzleType = () => form.elements.type.value;

function fillSelect(select, values, chosen) {
  select.replaceChildren(...values.map((value) => new Option(value, value)));
  select.value = chosen;
}

function fillOptions() {
  const kind = capabilities?.puzzles?.[puzzleType()];
  if (!kind) return;
  fillSelect($('#algorithm'), kind.algorithms, kind.defaults.algorithm);
  fillSelect($('#heuristic'), kind.heuristics, kind.defaults.heuristic);
  fillSelect($('#objective'), kind.objectives, kind.defaults.objective);
  fillPartitions();
}

// A partition applies to pattern databases on the board sizes that have standard ones.
function fillPartitions() {
  const partitions = capabilities?.puzzles?.sliding?.partitions?.[`${sliding.rows}x${sliding.cols}`] || [];
  fillSelect($('#partition'), ['', ...partitions], '');
  $('#partition').options[0].textContent = 'default';
  $('#partition').disabled = puzzleType() !== 'sliding' || $('#heuristic').value !== 'pattern-database' || !partitions.length;
}
$('#heuristic').addEventListener('change', fillPartitions);

/** The generator's sizes, boxes and difficulties, from /v1/capabilities. */
function fillGenerate() {
  const made = capabilities.generate;
  const sides = [];
  for (let side = Math.max(made.width.min, 6); side <= Math.min(made.width.max, 12); side += 1) sides.push(`${side}x${side}`);
  fillSelect($('#gen-size'), sides, `${made.defaults.width}x${made.defaults.height}`);
  const boxes = [];
  for (let n = made.boxes.min; n <= Math.min(made.boxes.max, 6); n += 1) boxes.push(String(n));
  fillSelect($('#gen-boxes'), boxes, String(made.defaults.boxes));
  const difficulty = $('#gen-difficulty');
  difficulty.replaceChildren(new Option('any', ''), ...made.difficulties.map((d) => new Option(d, d)));
}

function fillLimits() {
  const limits = capabilities.limits;
  $('#max-nodes').placeholder = `${limits.max_nodes.toLocaleString('en')} (the most)`;
  $('#max-nodes').max = String(limits.max_nodes);
  $('#timeout-ms').placeholder = `${limits.default_timeout_ms} (at most ${limits.max_timeout_ms})`;
  $('#timeout-ms').max = String(limits.max_timeout_ms);
}

function showType() {
  $('#sliding').hidden = puzzleType() !== 'sliding';
  $('#sokoban').hidden = puzzleType() !== 'sokoban';
  fillOptions();
}
for (const radio of form.elements.type) radio.addEventListener('change', showType);

// ---- Errors next to the field they concern.

function clearErrors() {
  for (const slot of document.querySelectorAll('.field-error')) slot.textContent = '';
  for (const field of document.querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
}

function showProblem(problem) {
  const pointer = problem.pointer || '';
  const slot =
    document.querySelector(`.field-error[data-for="${CSS.escape(pointer)}"]`) ||
    document.querySelector('.field-error[data-for=""]');
  slot.textContent = `${problem.title}: ${problem.detail}`;
  document.querySelector(`[data-pointer="${CSS.escape(pointer)}"]`)?.setAttribute('aria-invalid', 'true');
}

// ---- Running a job.

function currentPuzzle() {
  return puzzleType() === 'sliding' ? slidingPuzzle() : { type: 'sokoban', level: $('#level').value };
}

function currentOptions() {
  const numberIn = (id) => ($(id).value === '' ? undefined : Number($(id).value));
  return {
    algorithm: $('#algorithm').value,
    heuristic: $('#heuristic').value,
    partition: $('#partition').disabled ? undefined : $('#partition').value,
    objective: $('#objective').value,
    weight: numberIn('#weight'),
    limits: { max_nodes: numberIn('#max-nodes'), timeout_ms: numberIn('#timeout-ms') },
  };
}

/** Shows `work` (a promise of a finished job) in the run view, with Cancel live meanwhile. */
async function track(work) {
  $('#solve').disabled = true;
  $('#cancel').disabled = false;
  try {
    const job = await work;
    view.finished(job);
    if (job.status === 'solved') view.player.element.focus({ preventScroll: true });
  } catch (error) {
    if (error.name === 'AbortError' && error.job) view.finished(error.job);
    else if (error.problem) {
      showProblem(error.problem);
      view.error(error.problem.detail);
    } else view.error(error.message);
  } finally {
    $('#solve').disabled = false;
    $('#cancel').disabled = true;
    controller = null;
    refreshRecent();
  }
}

function followOptions() {
  controller = new AbortController();
  return {
    signal: controller.signal,
    onStatus: (job) => view.status(job),
    onProgress: (progress) => view.progress(progress),
  };
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  clearErrors();
  const puzzle = currentPuzzle();
  view.reset(puzzle);
  track(client.run(jobRequest(puzzle, currentOptions()), followOptions()));
});
$('#cancel').addEventListener('click', () => controller?.abort());

// ---- Recent jobs.

function summary(job) {
  const made = job.request.generate;
  if (made) {
    const count = job.result?.levels?.length;
    return `Generate ${made.width}×${made.height}, ${made.boxes} boxes: ${job.status}` + (count === undefined ? '' : `, ${count} of ${made.count} levels`);
  }
  const puzzle = job.request.puzzle;
  if (puzzle.type === '2048') {
    const played = job.result?.playout;
    if (played) return `2048 game: ${job.status}, score ${played.score}, largest tile ${played.max_tile}`;
    return `2048 ${puzzle.rows}×${puzzle.cols}: ${job.status}` + (job.result?.move ? `, move ${job.result.move}` : '');
  }
  const what =
    puzzle.type === 'sliding'
      ? `${puzzle.tiles.length / puzzle.cols}×${puzzle.cols} sliding`
      : `Sokoban, ${model(puzzle).boxes.length} boxes`;
  const length = job.result?.length === null || job.result?.length === undefined ? '' : `, ${job.result.length} moves`;
  return `${what}: ${job.status}${length}`;
}

async function refreshRecent() {
  try {
    const { jobs } = await client.list({ limit: 10 });
    $('#recent').replaceChildren(
      ...jobs.map((job) => {
        const item = document.createElement('li');
        // 2048 answers are shown on their board; the editors open puzzles and levels.
        const game = job.request.puzzle?.type === '2048';
        const open = document.createElement(game ? 'span' : 'button');
        if (!game) {
          open.type = 'button';
          open.className = 'recent-job';
          open.dataset.id = job.id;
        }
        open.textContent = summary(job);
        const time = document.createElement('time');
        time.dateTime = job.created_at;
        time.textContent = new Date(job.created_at).toLocaleTimeString();
        item.append(open, ' ', time);
        return item;
      }),
    );
  } catch (error) {
    $('#recent').replaceChildren(Object.assign(document.createElement('li'), { textContent: error.message }));
  }
}

function loadPuzzle(puzzle) {
  const radio = [...form.elements.type].find((r) => r.value === puzzle.type);
  radio.checked = true;
  showType();
  if (puzzle.type === 'sokoban') {
    $('#level').value = puzzle.level;
    drawLevel();
    return;
  }
  setShape(puzzle.tiles.length / puzzle.cols, puzzle.cols);
  const named = ['blank-last', 'blank-first'].find((name) => `${slidingGoal(puzzle.tiles.length, name)}` === `${puzzle.goal}`);
  sliding.goal = named || puzzle.goal;
  if (named) $('#goal').value = named;
  setTiles(puzzle.tiles);
}

$('#recent').addEventListener('click', async (event) => {
  const id = event.target.closest('.recent-job')?.dataset.id;
  if (!id || controller) return;
  clearErrors();
  try {
    const job = await client.job(id);
    const made = job.result?.levels?.[0];
    if (job.request.generate) {
      if (!made) return;
      loadPuzzle({ type: 'sokoban', level: made.level });
      $('#rating').textContent = describeRating(made);
      view.reset(currentPuzzle());
      return;
    }
    loadPuzzle(job.request.puzzle);
    view.reset(job.request.puzzle);
    if (isTerminal(job.status)) view.finished(job);
    else {
      view.status(job);
      track(client.follow(id, followOptions()));
    }
  } catch (error) {
    view.error(error.message);
  }
});
$('#refresh').addEventListener('click', refreshRecent);

// Playback keys work anywhere on the page that is not a form field.
document.addEventListener('keydown', (event) => {
  if (event.target !== document.body) return;
  const copy = new KeyboardEvent('keydown', { key: event.key, cancelable: true, bubbles: true });
  view.player.element.dispatchEvent(copy);
  if (copy.defaultPrevented) event.preventDefault();
});

// ---- Start.

setShape(3, 3);
setTiles(SLIDING_PRESETS[0].tiles);
$('#sokoban-sample').value = '0';
$('#level').value = SOKOBAN_SAMPLES[0].level;
drawLevel();
view.reset(slidingPuzzle());
showType();
async function loadCapabilities() {
  try {
    capabilities = await client.capabilities();
    fillOptions();
    fillGenerate();
    fillLimits();
  } catch (error) {
    view.error(`Cannot read the service's capabilities: ${error.message}`);
  }
}

// A new key may open what the last one could not.
$('#api-key').addEventListener('change', () => {
  sessionStorage.setItem(API_KEY_ITEM, $('#api-key').value.trim());
  if (!controller) view.reset(currentPuzzle());
  loadCapabilities();
  refreshRecent();
});

refreshRecent();
await loadCapabilities();
