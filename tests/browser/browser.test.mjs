// The web page and embed.js in a real browser: Debian's Chromium driven by playwright-core.
// Starts the real server (PUZZLED_BIN) on a fresh SQLite file and a random port, and a
// static server on two more ports (other origins: one allowed by --cors-origin, one not).
// Run by tests/web.rs under `cargo test`; alone: PUZZLED_BIN=target/debug/puzzled npm test
// in this folder. Screenshots go to PUZZLED_ARTIFACTS (default target/browser-artifacts).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = process.env.PUZZLED_BIN ?? path.join(here, '../../target/debug/puzzled');
const ARTIFACTS = process.env.PUZZLED_ARTIFACTS ?? path.join(here, '../../target/browser-artifacts');
const CHROMIUM = process.env.PUZZLED_CHROMIUM ?? '/usr/bin/chromium';
// A closed network: nothing may phone home (see the machine notes in README.md).
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SLOW = { timeout: 60_000 };

/** The static server for the embedding test page, listening on `port` (0: any). */
function staticSite() {
  const page = readFileSync(path.join(here, 'embed-test.html'));
  const server = http.createServer((request, response) => {
    if (request.url.startsWith('/embed-test.html')) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page);
    } else {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` })),
  );
}

/** `puzzled serve` on a fresh store; resolves once it logs the address it listens on. */
function startPuzzled(dir, { corsOrigin, env = {} } = {}) {
  const cors = corsOrigin ? ['--cors-origin', corsOrigin] : [];
  const child = spawn(
    BIN,
    ['serve', '--bind', '127.0.0.1:0', '--database-url', `sqlite://${path.join(dir, 'jobs.db')}`,
      '--workers', '2', '--warm-tables', 'false', ...cors],
    { env: { ...process.env, PUZZLED_DATA_DIR: path.join(dir, 'tables'), PUZZLED_LOG: 'info', ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`puzzled exited with ${code} before listening`)));
    // Keep reading the log so the server never blocks on a full pipe.
    createInterface({ input: child.stderr }).on('line', (line) => {
      const address = line.match(/address=(\S+)/)?.[1];
      if (address) resolve({ child, base: `http://${address}` });
    });
  });
}

const stopped = (child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM'))));

describe('the page and embed.js in Chromium', () => {
  let dir, allowed, denied, puzzled, browser;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'puzzled-browser-'));
    mkdirSync(ARTIFACTS, { recursive: true });
    [allowed, denied] = await Promise.all([staticSite(), staticSite()]);
    puzzled = await startPuzzled(dir, { corsOrigin: allowed.origin });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  });

  after(async () => {
    await browser?.close();
    if (puzzled) await stopped(puzzled.child);
    allowed?.server.close();
    denied?.server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A fresh page on the service, failing the test on any script error or CSP report
   * (but for the failed requests the test expects: `expected`, in the console's words).
   */
  async function openPage(t, { viewport = { width: 1200, height: 1000 }, expected = null } = {}) {
    const page = await browser.newPage({ viewport });
    const problems = [];
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error' && !expected?.test(message.text())) problems.push(message.text());
    });
    t.after(async () => {
      await page.close();
      assert.deepEqual(problems, [], 'the page logged errors');
    });
    await page.goto(`${puzzled.base}/`);
    // The search options come from /v1/capabilities.
    await page.waitForFunction(() => document.querySelector('#algorithm').options.length > 1);
    return page;
  }

  const tiles = (page) =>
    page.$$eval('#run .pz-tile', (nodes) => {
      const board = new Array(nodes.length + 1).fill(0);
      for (const node of nodes) board[Number(node.dataset.cell)] = Number(node.dataset.tile);
      return board;
    });
  /** Waits until the run view in `scope` leaves idle, queued and running; its status and words. */
  async function outcome(page, scope = '#run') {
    await page.waitForSelector(
      `${scope} .pz-run:not([data-status="idle"]):not([data-status="queued"]):not([data-status="running"])`,
      SLOW,
    );
    return page.$eval(`${scope} .pz-run`, (run) => [run.dataset.status, run.querySelector('.pz-outcome').textContent]);
  }
  const step = (page) => page.$eval('#run .pz-playback', (p) => Number(p.dataset.step));

  test('a Microban level is solved and played back to every box on a goal', SLOW, async (t) => {
    const page = await openPage(t);
    await page.check('input[name="type"][value="sokoban"]');
    await page.selectOption('#sokoban-sample', { label: 'Microban 3' });
    await page.waitForSelector('#sokoban-board .pz-box');
    assert.equal(await page.inputValue('#level'), '  ####\n###  ####\n#     $ #\n# #  #$ #\n# . .#@ #\n#########');
    await page.click('#solve');
    const [status, words] = await outcome(page);
    assert.equal(status, 'solved', words);
    assert.match(words, /^Solved in \d+ moves, \d+ pushes/);
    const steps = await page.$eval('#run .pz-playback', (p) => Number(p.dataset.steps));
    assert.equal(await page.textContent('#run [data-field="length"]'), String(steps));
    assert.equal(await page.$$eval('#run .pz-plan span', (s) => s.length), steps);
    assert.equal(await page.getAttribute('#run svg.pz-board', 'data-solved'), 'false');

    await page.selectOption('#run .pz-speed select', '50');
    await page.click('#run .pz-play');
    await page.waitForFunction(() => {
      const player = document.querySelector('#run .pz-playback');
      return player.dataset.playing === 'false' && player.dataset.step === player.dataset.steps;
    }, null, SLOW);
    const boxes = await page.$$eval('#run .pz-box', (nodes) => nodes.map((n) => n.classList.contains('pz-on-goal')));
    const goals = await page.$$eval('#run .pz-goal', (nodes) => nodes.length);
    assert.equal(boxes.length, 2);
    assert.equal(goals, 2);
    assert.ok(boxes.every(Boolean), 'every box ends on a goal');
    assert.equal(await page.getAttribute('#run svg.pz-board', 'data-solved'), 'true');
    await page.locator('#run-panel').screenshot({ path: path.join(ARTIFACTS, 'sokoban-solved.png') });
    await page.screenshot({ path: path.join(ARTIFACTS, 'sokoban-page.png'), fullPage: true });

    // Keys drive the player: Home back to the start, then one step.
    await page.focus('#run .pz-playback');
    await page.keyboard.press('Home');
    assert.equal(await step(page), 0);
    await page.keyboard.press('ArrowRight');
    assert.equal(await step(page), 1);

    // The job is listed under recent jobs and reopens with its solution.
    await page.waitForSelector('#recent .recent-job');
    assert.match(await page.textContent('#recent .recent-job'), /Sokoban, 2 boxes: solved/);
  });

  test('an 8-puzzle is solved optimally and stepped through', SLOW, async (t) => {
    const page = await openPage(t);
    await page.click('#solve');
    const [status, words] = await outcome(page);
    assert.equal(status, 'solved', words);
    assert.match(words, /Solved in 31 moves, proved optimal/);
    assert.equal(await page.textContent('#run [data-field="optimal"]'), 'yes, proved');
    const plan = await page.textContent('#run .pz-plan');
    assert.match(plan, /^[udlr]{31}$/);
    assert.deepEqual(await tiles(page), [8, 6, 7, 2, 5, 4, 3, 0, 1]);

    // One step: the blank moves as the plan's first letter says.
    await page.click('#run .pz-forward');
    assert.equal(await step(page), 1);
    const after = await tiles(page);
    const [dr, dc] = { u: [-1, 0], d: [1, 0], l: [0, -1], r: [0, 1] }[plan[0]];
    assert.equal(after.indexOf(0), 7 + dr * 3 + dc);
    await page.keyboard.press('ArrowRight'); // the player has focus after a solve
    assert.equal(await step(page), 2);
    await page.click('#run .pz-back');
    assert.equal(await step(page), 1);
    assert.deepEqual(await tiles(page), after);
    await page.fill('#run .pz-scrubber', '15');
    assert.equal(await step(page), 15);
    await page.locator('#run-panel').screenshot({ path: path.join(ARTIFACTS, 'sliding-playback.png') });
    await page.click('#run .pz-last');
    assert.deepEqual(await tiles(page), [1, 2, 3, 4, 5, 6, 7, 8, 0]);
    assert.equal(await page.getAttribute('#run svg.pz-board', 'data-solved'), 'true');
  });

  test('a long 15-puzzle job shows progress and is cancelled', SLOW, async (t) => {
    const page = await openPage(t, { viewport: { width: 390, height: 844 } }); // a phone
    await page.selectOption('#sliding-preset', { label: 'Korf #88 (65 moves, long)' });
    await page.selectOption('#algorithm', 'ida-star');
    await page.selectOption('#heuristic', 'manhattan');
    await page.click('#solve');
    await page.waitForSelector('#run .pz-run[data-status="running"]', SLOW);
    await page.waitForFunction(
      () => Number(document.querySelector('#run [data-field="nodes"]').textContent.replace(/,/g, '')) > 0,
      null,
      SLOW,
    );
    assert.equal(await page.isEnabled('#cancel'), true);
    await page.screenshot({ path: path.join(ARTIFACTS, 'phone-running.png'), fullPage: true });
    await page.click('#cancel');
    const [status, words] = await outcome(page);
    assert.equal(status, 'cancelled', words);
    assert.match(words, /^Cancelled after [\d,]+ nodes\.$/);
    assert.equal(await page.isEnabled('#solve'), true);
    assert.equal(await page.isEnabled('#cancel'), false);
    const stored = await (await fetch(`${puzzled.base}/v1/jobs?status=cancelled`)).json();
    assert.equal(stored.jobs.length, 1);
    // Nothing on a phone-sized screen is wider than the screen.
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
  });

  test('jobs that end without a plan are explained, and shuffles stay solvable', SLOW, async (t) => {
    const page = await openPage(t);
    await page.fill('#tiles', '2 1 3 4 5 6 7 8 0');
    assert.equal(await page.textContent('#solvable'), 'This board cannot reach its goal.');
    await page.click('#solve');
    let [status, words] = await outcome(page);
    assert.equal(status, 'unsolvable', words);
    assert.match(words, /cannot reach its goal/);

    await page.selectOption('#sliding-preset', { label: 'Korf #1 (57 moves)' });
    await page.fill('#max-nodes', '1000');
    await page.click('#solve');
    [status, words] = await outcome(page);
    assert.equal(status, 'exhausted', words);
    assert.match(words, /node limit after expanding 1,0\d\d nodes/);

    await page.selectOption('#rows', '5');
    for (let i = 0; i < 5; i++) {
      const before = await page.inputValue('#tiles');
      await page.click('#shuffle');
      assert.notEqual(await page.inputValue('#tiles'), before);
      assert.equal(await page.textContent('#solvable'), 'This board can reach its goal.');
    }
    assert.equal((await page.inputValue('#tiles')).split(' ').length, 20);
  });

  test('API errors are shown next to the field they concern', SLOW, async (t) => {
    const page = await openPage(t, { expected: /status of 422/ });
    await page.check('input[name="type"][value="sokoban"]');
    await page.fill('#level', '#####\n#@$ #\n#####');
    await page.click('#solve');
    const levelError = page.locator('.field-error[data-for="/puzzle/level"]');
    await levelError.waitFor();
    assert.match(await levelError.textContent(), /1 boxes but 0 goals/);
    assert.equal(await page.getAttribute('#level', 'aria-invalid'), 'true');
    assert.equal(await page.getAttribute('#run .pz-run', 'data-status'), 'error');

    // A limit over the service's cap is pinned to its own field, and the level's error is gone.
    await page.selectOption('#sokoban-sample', { label: 'Microban 1' });
    await page.fill('#max-nodes', '999999999999');
    await page.click('#solve');
    const limitError = page.locator('.field-error[data-for="/limits/max_nodes"]');
    await limitError.waitFor();
    assert.match(await limitError.textContent(), /over this service's cap/);
    assert.equal(await levelError.textContent(), '');
  });

  test('a generated level fills the Sokoban editor with its rating, is solved, and its seed makes it again', SLOW, async (t) => {
    const page = await openPage(t);
    await page.check('input[name="type"][value="sokoban"]');
    await page.waitForSelector('#gen-size option[value="7x7"]', { state: 'attached' });
    await page.selectOption('#gen-size', '7x7');
    await page.selectOption('#gen-boxes', '2');
    await page.click('#generate');
    await page.waitForFunction(() => /score/.test(document.querySelector('#rating').textContent), null, SLOW);
    const rating = await page.textContent('#rating');
    assert.match(rating, /^(easy|medium|hard) \(score [\d.]+\): \d+ pushes, optimal; \d+ box lines, \d+ box changes; seed \d+$/);
    const level = await page.inputValue('#level');
    assert.equal(level.trimEnd().split('\n').length, 7);
    assert.equal(await page.$$eval('#sokoban-board .pz-box', (boxes) => boxes.length), 2);
    await page.click('#solve');
    const [status, words] = await outcome(page);
    assert.equal(status, 'solved', words);

    // embed.js's generate(): the level's seed makes the same level.
    const seed = Number(rating.match(/seed (\d+)$/)[1]);
    const again = await page.evaluate(async (seed) => {
      const { generate } = await import('/embed.js');
      const job = await generate({ width: 7, height: 7, boxes: 2, seed });
      return job.result.levels[0].level;
    }, seed);
    assert.equal(again.trimEnd(), level.trimEnd());
  });

  test('the 2048 board is played by hand, hinted and auto-played by the engine', SLOW, async (t) => {
    // The bad board at the end is refused: the browser logs its 422.
    const page = await openPage(t, { expected: /422/ });
    const cells = () => page.$$eval('#twenty48 .pz-2048-cell', (nodes) => nodes.map((n) => Number(n.dataset.value)));
    const start = await cells();
    assert.equal(start.length, 16);
    assert.equal(start.filter((v) => v > 0).length, 2);
    // A legal move by key: the board changes and a tile appears.
    const legal = await page.evaluate(async (board) => {
      const { legalMoves } = await import('/embed.js');
      return legalMoves(board, 4, 4);
    }, start);
    assert.ok(legal.length > 0);
    const keys = { up: 'ArrowUp', down: 'ArrowDown', left: 'ArrowLeft', right: 'ArrowRight' };
    await page.focus('#twenty48 .pz-2048');
    await page.keyboard.press(keys[legal[0]]);
    await page.waitForFunction(() => /1 moves/.test(document.querySelector('#twenty48 .pz-2048-info').textContent));
    assert.equal((await cells()).filter((v) => v > 0).length >= 2, true);

    // Hint: the engine's move and a value for every legal move.
    await page.click('#twenty48 .pz-2048-hint');
    await page.waitForFunction(() => document.querySelector('#twenty48 .pz-2048-advice').dataset.move, null, SLOW);
    const advice = await page.textContent('#twenty48 .pz-2048-advice');
    assert.match(advice, /^Best: (up|down|left|right) \((expectimax|best-first), depth \d+\)/);
    const hinted = await page.getAttribute('#twenty48 .pz-2048-advice', 'data-move');
    const board = await cells();
    const legalNow = await page.evaluate(async (board) => (await import('/embed.js')).legalMoves(board, 4, 4), board);
    assert.ok(legalNow.includes(hinted), `${hinted} is not legal on ${board}`);
    for (const dir of legalNow) assert.ok(advice.includes(` ${dir} `), advice);

    // Auto-play: the engine makes moves until stopped.
    await page.click('#twenty48 .pz-2048-auto');
    await page.waitForFunction(() => {
      const moves = Number(document.querySelector('#twenty48 .pz-2048-info').textContent.match(/(\d+) moves/)[1]);
      return moves >= 6;
    }, null, SLOW);
    await page.click('#twenty48 .pz-2048-auto');
    assert.equal(await page.textContent('#twenty48 .pz-2048-auto'), 'Auto-play');
    await page.screenshot({ path: path.join(ARTIFACTS, 'twenty48.png'), fullPage: true });

    // embed.js's hint2048 answers a position, and a bad board is refused naming the cell.
    const answer = await page.evaluate(async () => {
      const { hint2048 } = await import('/embed.js');
      return hint2048([2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4], { limits: { timeout_ms: 50 } });
    });
    assert.ok(['up', 'down', 'left', 'right'].includes(answer.move));
    assert.ok(Object.keys(answer.move_values).length >= 3);
    const refused = await page.evaluate(async () => {
      const { hint2048 } = await import('/embed.js');
      try {
        await hint2048([2, 3, 0, 0], { rows: 2, cols: 2 });
        return null;
      } catch (error) {
        return { name: error.name, status: error.problem?.status, pointer: error.problem?.pointer };
      }
    });
    assert.deepEqual(refused, { name: 'ProblemError', status: 422, pointer: '/puzzle/cells/1' });
  });

  test('another site embeds the widget and solves through CORS', SLOW, async (t) => {
    const page = await browser.newPage();
    t.after(() => page.close());
    await page.goto(`${allowed.origin}/embed-test.html?api=${encodeURIComponent(puzzled.base)}`);
    await page.waitForFunction(() => window.solved || window.embedError, null, SLOW);
    assert.equal(await page.evaluate(() => window.embedError), undefined);
    const solved = await page.evaluate(() => window.solved);
    assert.equal(solved.status, 'solved');
    assert.equal(solved.pushes, 8);
    assert.deepEqual(solved.statuses.at(-1), 'solved');

    // The widget: Solve, then the last step shows the goal.
    await page.click('#widget .pz-solve');
    const [status, words] = await outcome(page, '#widget');
    assert.equal(status, 'solved', words);
    await page.click('#widget .pz-last');
    assert.equal(await page.getAttribute('#widget svg.pz-board', 'data-solved'), 'true');
    await page.screenshot({ path: path.join(ARTIFACTS, 'embedded.png'), fullPage: true });

    // Progress over the event stream, then a cancel through the AbortSignal.
    await page.waitForFunction(() => window.cancelled, null, SLOW);
    const cancelled = await page.evaluate(() => window.cancelled);
    assert.equal(cancelled.name, 'AbortError');
    assert.equal(cancelled.status, 'cancelled');
    assert.ok(cancelled.progress.length >= 1 && cancelled.progress[0] > 0);
    await page.waitForFunction(() => window.refused, null, SLOW);
    assert.deepEqual(await page.evaluate(() => window.refused), { name: 'ProblemError', status: 422, pointer: '/puzzle/tiles' });
  });

  test('a site that --cors-origin does not list cannot load it', SLOW, async (t) => {
    const page = await browser.newPage();
    t.after(() => page.close());
    await page.goto(`${denied.origin}/embed-test.html?api=${encodeURIComponent(puzzled.base)}`);
    await page.waitForFunction(() => window.solved || window.embedError, null, SLOW);
    assert.match(await page.evaluate(() => window.embedError), /Failed to fetch dynamically imported module/);
  });
});

describe('the page with API keys on', () => {
  const KEY = 'browser-test-key-5f3a9c1e';
  let dir, puzzled, browser;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'puzzled-browser-keys-'));
    puzzled = await startPuzzled(dir, { env: { PUZZLED_API_KEYS: KEY } });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  });

  after(async () => {
    await browser?.close();
    if (puzzled) await stopped(puzzled.child);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('asks for a key, then solves with it and follows the job', SLOW, async (t) => {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 401/.test(message.text())) problems.push(message.text());
    });
    t.after(async () => {
      await page.close();
      assert.deepEqual(problems, [], 'the page logged errors');
    });
    await page.goto(`${puzzled.base}/`);
    await page.waitForSelector('#run .pz-run[data-status="error"]', SLOW);
    assert.match(await page.textContent('#run .pz-outcome'), /needs an API key/);

    await page.fill('#api-key', KEY);
    await page.dispatchEvent('#api-key', 'change');
    await page.waitForFunction(() => document.querySelector('#algorithm').options.length > 1, null, SLOW);
    // Over the queue, so the page follows the job's event stream with the key.
    await page.selectOption('#sliding-preset', { label: 'Korf #1 (57 moves)' });
    await page.fill('#max-nodes', '200000');
    await page.click('#solve');
    await page.waitForSelector('#run .pz-run:not([data-status="idle"]):not([data-status="queued"]):not([data-status="running"])', SLOW);
    assert.equal(await page.getAttribute('#run .pz-run', 'data-status'), 'exhausted');

    const keyed = (url) => fetch(url, { headers: { authorization: `Bearer ${KEY}` } });
    const { jobs } = await (await keyed(`${puzzled.base}/v1/jobs`)).json();
    assert.equal(jobs.length, 1, 'the job belongs to the key');
    assert.equal((await fetch(`${puzzled.base}/v1/jobs`)).status, 401);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('puzzled-api-key')), KEY);
  });
});
