// Playback of a plan on its board: play/pause, step, a scrubber, speed, the plan text with
// the current step marked, and keys (Space, arrows, Home/End, + and -) while it has focus.

import { createBoard } from './board.js';
import { model as puzzleModel } from './puzzles.js';

const SPEEDS = [1, 2, 5, 10, 20, 50];
// Drawn, not typed: not every font has the media-control characters.
const ICONS = {
  first: 'M2 2h2v12H2zM14 2v12L5 8z',
  back: 'M12 2v12L4 8z',
  play: 'M4 2v12l10-6z',
  pause: 'M3 2h4v12H3zM9 2h4v12H9z',
  forward: 'M4 2v12l8-6z',
  last: 'M2 2v12l9-6zM12 2h2v12h-2z',
};

function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', ICONS[name]);
  path.setAttribute('fill', 'currentColor');
  svg.append(path);
  return svg;
}

function html(tag, attributes = {}, text = '') {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text) node.textContent = text;
  return node;
}

/**
 * A player inside `container`. `load(puzzle, plan)` shows the puzzle (a job request's
 * `puzzle`) at step 0 of `plan` (blank moves or LURD; '' for none).
 */
export function createPlayer(container) {
  const root = html('div', { class: 'pz-playback', tabindex: 0, 'aria-label': 'solution player' });
  const stage = html('div', { class: 'pz-stage' });
  const board = createBoard(stage, { label: 'solution board' });
  const controls = html('div', { class: 'pz-controls' });
  const button = (name, title) => {
    const b = html('button', { type: 'button', class: `pz-${name}`, title, 'aria-label': title });
    b.append(icon(name));
    controls.append(b);
    return b;
  };
  const first = button('first', 'Start (Home)');
  const back = button('back', 'Step back (←)');
  const play = button('play', 'Play or pause (Space)');
  const forward = button('forward', 'Step forward (→)');
  const last = button('last', 'End (End)');
  const scrubber = html('input', { type: 'range', class: 'pz-scrubber', min: 0, max: 0, value: 0, 'aria-label': 'step' });
  const speedLabel = html('label', { class: 'pz-speed' }, 'Speed ');
  const speed = html('select', { 'aria-label': 'steps per second' });
  for (const s of SPEEDS) speed.append(html('option', { value: s }, `${s}/s`));
  speed.value = '5';
  speedLabel.append(speed);
  const counter = html('output', { class: 'pz-counter', 'aria-live': 'off' }, '0 / 0');
  controls.append(scrubber, counter, speedLabel);
  const planText = html('div', { class: 'pz-plan', 'aria-label': 'plan' });
  root.append(stage, controls, planText);
  container.append(root);

  let current = null; // the model being played
  let states = [];
  let moves = [];
  let step = 0;
  let timer = null;

  function render(animate = false) {
    board.show(current, states[step], { animate });
    scrubber.value = String(step);
    counter.textContent = `${step} / ${states.length - 1}`;
    root.dataset.step = String(step);
    root.dataset.steps = String(states.length - 1);
    planText.querySelector('.pz-now')?.classList.remove('pz-now');
    if (step > 0) moves[step - 1].classList.add('pz-now');
    const atEnd = step === states.length - 1;
    first.disabled = back.disabled = step === 0;
    forward.disabled = last.disabled = atEnd;
    play.disabled = states.length < 2;
    if (atEnd && timer) pause();
  }

  function go(to) {
    const next = Math.max(0, Math.min(states.length - 1, to));
    // One step slides; a jump (scrubber, Home, End) shows the new board at once.
    const animate = Math.abs(next - step) === 1;
    step = next;
    render(animate);
  }

  function pause() {
    clearInterval(timer);
    timer = null;
    play.replaceChildren(icon('play'));
    root.dataset.playing = 'false';
  }

  function start() {
    if (states.length < 2) return;
    if (step === states.length - 1) go(0);
    clearInterval(timer);
    timer = setInterval(() => go(step + 1), 1000 / Number(speed.value));
    play.replaceChildren(icon('pause'));
    root.dataset.playing = 'true';
  }

  const toggle = () => (timer ? pause() : start());
  first.addEventListener('click', () => go(0));
  back.addEventListener('click', () => go(step - 1));
  play.addEventListener('click', toggle);
  forward.addEventListener('click', () => go(step + 1));
  last.addEventListener('click', () => go(states.length - 1));
  scrubber.addEventListener('input', () => go(Number(scrubber.value)));
  speed.addEventListener('change', () => timer && start());
  root.addEventListener('keydown', (event) => {
    if (event.target.closest('select, input') && event.target !== scrubber) return;
    const keys = {
      ' ': toggle,
      ArrowRight: () => go(step + 1),
      ArrowLeft: () => go(step - 1),
      Home: () => go(0),
      End: () => go(states.length - 1),
      '+': () => changeSpeed(1),
      '-': () => changeSpeed(-1),
    };
    const action = keys[event.key];
    if (!action || event.ctrlKey || event.metaKey || event.altKey) return;
    event.preventDefault();
    action();
  });

  function changeSpeed(by) {
    const index = SPEEDS.indexOf(Number(speed.value)) + by;
    speed.value = String(SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, index))]);
    if (timer) start();
  }

  return {
    element: root,
    /** Shows `puzzle` at step 0 of `plan`; throws if the plan does not replay. */
    load(puzzle, plan = '') {
      pause();
      const next = puzzleModel(puzzle);
      states = next.states(plan);
      current = next;
      moves = [...plan].map((move) => html('span', {}, move));
      planText.replaceChildren(...moves);
      planText.hidden = plan === '';
      scrubber.max = String(states.length - 1);
      go(0);
    },
    play: start,
    pause,
    go,
  };
}
