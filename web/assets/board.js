// Boards drawn as SVG. Colours are presentation attributes, so a board looks right on a
// page that loads none of our style sheets; class names let a page restyle it and let
// tests read it (`.pz-tile[data-tile]`, `.pz-box.pz-on-goal`, `.pz-player`).

const SVG = 'http://www.w3.org/2000/svg';
const TILE = 100;
const SQUARE = 32;

function element(tag, attributes = {}, parent = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  parent?.append(node);
  return node;
}

// Moving pieces keep their element and change only `transform`, so a style sheet may
// animate them with a CSS transition.
function place(node, x, y) {
  node.style.transform = `translate(${x}px, ${y}px)`;
}

/**
 * A board view inside `container`: `show(model, state)` draws `state` of `model` (from
 * puzzles.js `model()`); `onCellClick(cell)` is called with the cell of a clicked tile.
 */
export function createBoard(container, { label = 'puzzle board', onCellClick } = {}) {
  const svg = element('svg', { class: 'pz-board', role: 'img', 'aria-label': label, preserveAspectRatio: 'xMidYMid meet' });
  container.append(svg);
  let drawn = null; // the model the static layer was drawn for
  let pieces = new Map();

  function reset(model) {
    svg.replaceChildren();
    pieces = new Map();
    drawn = model;
    const unit = model.kind === 'sokoban' ? SQUARE : TILE;
    svg.setAttribute('viewBox', `0 0 ${Math.max(1, model.cols) * unit} ${Math.max(1, model.rows) * unit}`);
    svg.dataset.kind = model.kind;
    if (model.kind === 'sokoban') drawLevel(model);
    else element('rect', { class: 'pz-frame', width: model.cols * TILE, height: model.rows * TILE, rx: 8, fill: '#e7e2d8' }, svg);
  }

  function drawLevel(level) {
    const floor = element('g', { class: 'pz-floor' }, svg);
    for (let cell = 0; cell < level.rows * level.cols; cell++) {
      const x = (cell % level.cols) * SQUARE;
      const y = Math.floor(cell / level.cols) * SQUARE;
      if (level.walls[cell]) {
        element('rect', { class: 'pz-wall', x, y, width: SQUARE, height: SQUARE, fill: '#6b5b4b', stroke: '#4f4236' }, floor);
      } else if (level.inside[cell] || level.goals[cell]) {
        element('rect', { class: 'pz-square', x, y, width: SQUARE, height: SQUARE, fill: '#f3efe6', stroke: '#e2dccf' }, floor);
      }
      if (level.goals[cell]) {
        element('circle', { class: 'pz-goal', cx: x + SQUARE / 2, cy: y + SQUARE / 2, r: SQUARE / 5, fill: '#d9534f', 'data-cell': cell }, floor);
      }
    }
  }

  function piece(key, build) {
    if (!pieces.has(key)) pieces.set(key, build());
    return pieces.get(key);
  }

  function showTiles(model, tiles) {
    tiles.forEach((tile, cell) => {
      if (tile === 0) return;
      const node = piece(tile, () => {
        const g = element('g', { class: 'pz-tile', 'data-tile': tile }, svg);
        element('rect', { x: 4, y: 4, width: TILE - 8, height: TILE - 8, rx: 10, fill: '#2f6f8f' }, g);
        const text = element('text', { x: TILE / 2, y: TILE / 2, 'text-anchor': 'middle', 'dominant-baseline': 'central', 'font-size': 40, 'font-family': 'system-ui, sans-serif', fill: '#fff' }, g);
        text.textContent = String(tile);
        if (onCellClick) g.addEventListener('click', () => onCellClick(Number(g.dataset.cell)));
        return g;
      });
      node.dataset.cell = String(cell);
      node.classList.toggle('pz-home', model.goal[cell] === tile);
      node.firstChild.setAttribute('fill', model.goal[cell] === tile ? '#3d8b5a' : '#2f6f8f');
      place(node, (cell % model.cols) * TILE, Math.floor(cell / model.cols) * TILE);
    });
  }

  function showLevel(model, state) {
    state.boxes.forEach((cell, index) => {
      const node = piece(`box${index}`, () => {
        const g = element('g', { class: 'pz-box' }, svg);
        element('rect', { x: 3, y: 3, width: SQUARE - 6, height: SQUARE - 6, rx: 4, fill: '#c8923c', stroke: '#8a5f1e', 'stroke-width': 2 }, g);
        return g;
      });
      const home = model.goals[cell];
      node.classList.toggle('pz-on-goal', home);
      node.dataset.cell = String(cell);
      node.firstChild.setAttribute('fill', home ? '#5a9e4b' : '#c8923c');
      place(node, (cell % model.cols) * SQUARE, Math.floor(cell / model.cols) * SQUARE);
    });
    if (state.player >= 0) {
      const node = piece('player', () => {
        const g = element('g', { class: 'pz-player' }, svg);
        element('circle', { cx: SQUARE / 2, cy: SQUARE / 2, r: SQUARE / 2 - 5, fill: '#2b4a8b', stroke: '#fff', 'stroke-width': 2 }, g);
        return g;
      });
      node.dataset.cell = String(state.player);
      place(node, (state.player % model.cols) * SQUARE, Math.floor(state.player / model.cols) * SQUARE);
    }
  }

  return {
    element: svg,
    /**
     * Draws `state`: tiles for a sliding board, `{player, boxes}` for a level. With
     * `animate`, a style sheet's transitions may slide the pieces there.
     */
    show(model, state, { animate = false } = {}) {
      if (model !== drawn) reset(model);
      svg.classList.toggle('pz-jump', !animate);
      if (model.kind === 'sokoban') showLevel(model, state);
      else showTiles(model, state);
      svg.dataset.solved = String(
        model.kind === 'sokoban'
          ? state.boxes.length > 0 && state.boxes.every((cell) => model.goals[cell])
          : state.every((tile, cell) => tile === model.goal[cell]),
      );
    },
  };
}
