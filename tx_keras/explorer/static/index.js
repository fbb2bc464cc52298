// The Attention tab: TensorBoard loads this module in the tab's iframe and calls render().
// Data comes from this plugin's routes (relative to the iframe's <base href="plugin/tx_attention/">).

import {el, headToggles, headView, modelView} from './views.js';
import {exportButtons, matrixView} from './matrix.js';
import {explainView, offList} from './explain.js';

const KIND_NAMES = {
  encoder_self: 'encoder self-attention',
  decoder_self: 'decoder self-attention',
  cross: 'cross-attention',
};
const CAPTIONS = {
  encoder_self: ['source (query)', 'source (key)'],
  decoder_self: ['decoder input (query)', 'decoder input (key)'],
  cross: ['decoder input (query)', 'source (key)'],
};
const VIEWS = {
  raw: 'raw weights',
  rollout: 'rollout',
  why: 'why this word?',
};
const REFRESH_MS = 15000; // growing runs get new epochs, deleted runs disappear

// Step 0 is logged before the first epoch: the untrained model.
function epochText(step, last) {
  return step === 0 ? 'before training' : last === undefined ? `epoch ${step}` : `epoch ${step} of ${last}`;
}

const state = {
  listing: null,
  run: null, // the main run
  compare: '', // a second run shown beside it, '' for none
  probe: 0,
  kind: 'cross',
  view: 'raw', // raw weights, their rollout through the layers, or the model's own explanation
  layer: 0,
  step: null, // the epoch shown; null = the last one logged
  panels: {}, // run -> {record, hidden: Set, focus, error}
  typed: null, // {record, hidden, focus, layer, run}
};

let root;

async function getJson(url, options) {
  let response;
  try {
    response = await fetch(url, options);
  } catch (error) {
    throw new Error('TensorBoard did not answer (is it still running?)');
  }
  let body = null;
  try {
    body = await response.json();
  } catch (error) {
    body = null;
  }
  if (!response.ok) throw new Error((body && body.error) || `the server answered ${response.status}`);
  return body;
}

export async function render() {
  document.head.append(el('link', {rel: 'stylesheet', href: './explorer.css'}));
  root = el('div', {class: 'explorer'});
  document.body.append(root);
  root.append(el('div', {class: 'notice', text: 'Loading the runs…'}));
  await refresh();
  setInterval(refresh, REFRESH_MS);
}

async function refresh() {
  let listing;
  try {
    listing = await getJson('./runs');
  } catch (error) {
    showNotice(`Could not list the runs: ${error.message}`);
    return;
  }
  const before = state.listing;
  state.listing = listing;
  const names = listing.runs.map((run) => run.run);
  const lost = [state.run, state.compare].filter((run) => run && !names.includes(run));
  if (!state.run || lost.includes(state.run)) state.run = names[0] || null;
  if (lost.includes(state.compare) || state.compare === state.run) state.compare = '';
  state.lost = lost;
  const changed = !before || JSON.stringify(before) !== JSON.stringify(listing);
  if (changed) {
    if (state.step !== null && !currentRun()?.steps.includes(state.step)) state.step = null;
    await loadPanels();
  }
}

function currentRun() {
  return state.listing.runs.find((run) => run.run === state.run);
}

function showNotice(text) {
  root.replaceChildren(el('h2', {text: 'Attention'}), el('div', {class: 'notice error', text}));
}

// Each call numbers itself: only the latest one draws, so an answer that comes back late (a slow server,
// the user already on another epoch or probe) cannot paint over what was asked for since.
let panelsAsked = 0;

async function loadPanels() {
  const asked = ++panelsAsked;
  const runs = [state.run, state.compare].filter(Boolean);
  const run = currentRun();
  if (run) {
    const probe = run.probes.find((p) => p.probe === state.probe) || run.probes[0];
    state.probe = probe ? probe.probe : 0;
    if (probe && !probe.kinds.includes(state.kind)) state.kind = probe.kinds[probe.kinds.length - 1];
  }
  const answers = await Promise.all(
    runs.map(async (name) => {
      const query = new URLSearchParams({run: name, probe: state.probe, kind: state.kind});
      if (state.step !== null) query.set('step', state.step);
      try {
        const route = state.view === 'rollout' ? './rollout?' : './attention?';
        const answer = {record: await getJson(route + query), error: null, explain: null};
        if (state.view === 'why') answer.explain = await explain(name, {probe: state.probe}, state.panels[name]);
        return [name, answer];
      } catch (error) {
        return [name, {record: null, error: error.message}];
      }
    })
  );
  if (asked !== panelsAsked) return;
  for (const [name, answer] of answers) {
    state.panels[name] = {...(state.panels[name] || {hidden: new Set(), focus: null}), ...answer};
  }
  draw();
}

// The run's model on one sentence (/explain); the heads the panel's knock-out ticks stay knocked out.
async function explain(run, sentence, holder) {
  const why = holder?.why || {picked: 0, off: new Set(), topK: 2};
  const started = performance.now();
  const body = await getJson('./explain', {
    method: 'POST',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({run, ...sentence, heads_off: offList(why)}),
  });
  body.asked_ms = performance.now() - started;
  if (holder) holder.why = why;
  return {body, why};
}

function draw() {
  const listing = state.listing;
  const parts = [el('h2', {text: 'Attention'})];
  if (state.lost && state.lost.length) {
    parts.push(
      el('div', {
        class: 'notice warning',
        text: `No longer in the logdir: ${state.lost.join(', ')} (run folder deleted or moved).`,
      })
    );
  }
  if (!listing.runs.length) {
    parts.push(
      el('div', {
        class: 'notice',
        'data-state': 'empty',
        text:
          'No run here has logged raw attention yet. Runs log it at the epochs the attention maps are drawn ' +
          '(logging.attention_maps, logging.attention_tensors_mb > 0); runs from older versions of tx_keras ' +
          'have only the PNG maps in the Images tab. A run that has just started shows up within seconds.',
      })
    );
  } else {
    parts.push(controls());
    const panels = [state.run, state.compare].filter(Boolean).map((name) => panel(name));
    parts.push(el('div', {class: 'panels' + (panels.length > 1 ? ' two' : '')}, panels));
  }
  parts.push(typedSection());
  root.replaceChildren(...parts);
}

function select(label, options, value, onChange, attributes = {}) {
  const node = el(
    'select',
    {...attributes, onchange: (event) => onChange(event.target.value)},
    options.map(([optionValue, text]) =>
      el('option', {value: optionValue, text, selected: String(optionValue) === String(value)})
    )
  );
  return el('label', {class: 'control'}, [el('span', {class: 'label', text: label}), node]);
}

// A run's name in the menus: TensorBoard calls the logdir's own folder `.` (tx-board RUN_FOLDER); the
// server names it after the folder.
function label(name) {
  return (state.listing.labels || {})[name] || name || '.';
}

function controls() {
  const run = currentRun();
  const runs = state.listing.runs.map((r) => [r.run, label(r.run)]);
  const probe = run.probes.find((p) => p.probe === state.probe) || run.probes[0];
  const main = state.panels[state.run]?.record;
  const layers = main ? main.weights.length : 1;
  const steps = run.steps;
  const stepIndex = state.step === null ? steps.length - 1 : Math.max(0, steps.indexOf(state.step));
  const kinds = el(
    'div',
    {class: 'control kinds'},
    [el('span', {class: 'label', text: 'Kind'})].concat(
      (probe ? probe.kinds : []).map((kind) =>
        el('button', {
          class: 'kind' + (kind === state.kind ? ' active' : ''),
          'data-kind': kind,
          text: KIND_NAMES[kind],
          onclick: () => {
            state.kind = kind;
            resetFocus();
            loadPanels();
          },
        })
      )
    )
  );
  const slider = el('input', {
    type: 'range',
    class: 'epoch-slider',
    min: 0,
    max: Math.max(0, steps.length - 1),
    value: stepIndex,
    disabled: steps.length < 2,
    oninput: (event) => {
      state.step = steps[Number(event.target.value)];
      epochLabel.textContent = epochText(state.step, steps[steps.length - 1]);
      loadPanels();
    },
  });
  const epochLabel = el('span', {class: 'epoch-label', text: epochText(steps[stepIndex], steps[steps.length - 1])});
  const play = el('button', {
    class: 'link-button',
    text: '▶ replay',
    disabled: steps.length < 2,
    title: 'step through every logged epoch',
    onclick: () => replay(steps),
  });
  const views = el(
    'div',
    {class: 'control views'},
    [el('span', {class: 'label', text: 'View'})].concat(
      Object.entries(VIEWS).map(([view, text]) =>
        el('button', {
          class: 'kind' + (view === state.view ? ' active' : ''),
          'data-view': view,
          text,
          onclick: () => {
            state.view = view;
            loadPanels();
          },
        })
      )
    )
  );
  return el('div', {class: 'controls'}, [
    views,
    select('Run', runs, state.run, (value) => {
      state.run = value;
      if (state.compare === value) state.compare = '';
      state.step = null;
      loadPanels();
    }, {'data-control': 'run'}),
    select('Compare with', [['', '—']].concat(runs.filter(([name]) => name !== state.run)), state.compare, (value) => {
      state.compare = value;
      loadPanels();
    }, {'data-control': 'compare'}),
    select(
      'Probe',
      run.probes.map((p) => [p.probe, `${p.probe + 1}: ${p.source}`]),
      state.probe,
      (value) => {
        state.probe = Number(value);
        resetFocus();
        loadPanels();
      },
      {'data-control': 'probe'}
    ),
    kinds,
    select(
      'Layer',
      Array.from({length: layers}, (_, i) => [i, `layer ${i + 1}`]),
      state.layer,
      (value) => {
        state.layer = Number(value);
        draw();
      },
      {'data-control': 'layer'}
    ),
    el('label', {class: 'control epoch'}, [el('span', {class: 'label', text: 'Epoch'}), slider, epochLabel, play]),
  ]);
}

function fileName(run) {
  return label(run).replace(/[^A-Za-z0-9_.-]+/g, '_');
}

// Rollout: one matrix (rows sum to 1), drawn as the head view and as a heat-map with export buttons.
function rolloutPanel(name, record, panelState, top) {
  const started = performance.now();
  const captions = CAPTIONS[record.kind];
  const notes = {
    encoder_self: 'Encoder self-attention rolled out: 0.5·mean(heads) + 0.5·I per layer, multiplied over the layers (Abnar & Zuidema 2020).',
    decoder_self: 'Decoder self-attention rolled out through every layer, as the encoder\'s.',
    cross: 'Source words each decoder position draws on through every layer: decoder self-attention and cross-attention rolled out together with the encoder\'s rollout; rows renormalised over the source.',
  };
  const section = el('section', {class: 'panel rollout', 'data-run': name}, [
    ...top,
    el('div', {class: 'notice', text: notes[record.kind]}),
    headView(record, 0, new Set(), panelState.focus, (focus) => {
      panelState.focus = focus;
    }, captions),
    matrixView(record.queries, record.keys, record.weights[0][0], {
      title: `rollout (${captions[0]} × ${captions[1]})`,
      name: `${fileName(name)}_rollout_${record.kind}`,
    }),
  ]);
  section.dataset.drawMs = (performance.now() - started).toFixed(1);
  return section;
}

function whyPanel(name, panelState, top) {
  const {body, why} = panelState.explain;
  const onKnockout = async () => {
    try {
      panelState.explain = await explain(name, {probe: state.probe}, panelState);
    } catch (error) {
      panelState.error = error.message;
    }
    draw();
  };
  return el('section', {class: 'panel why', 'data-run': name}, [
    ...top,
    el('div', {class: 'notice', text: "The run's model as it ended training (its model.keras), teacher-forced on the reference."}),
    explainView(body, why, onKnockout, `${fileName(name)}_probe_${state.probe + 1}`),
  ]);
}

async function replay(steps) {
  for (const step of steps) {
    state.step = step;
    await loadPanels();
    await new Promise((resolve) => setTimeout(resolve, 700));
  }
}

function resetFocus() {
  for (const panelState of Object.values(state.panels)) panelState.focus = null;
}

function panel(name) {
  const panelState = state.panels[name];
  const header = el('div', {class: 'panel-title'}, [el('span', {class: 'run-name', text: label(name)})]);
  if (!panelState || panelState.error) {
    return el('section', {class: 'panel', 'data-run': name}, [
      header,
      el('div', {class: 'notice error', text: panelState ? panelState.error : 'Loading…'}),
    ]);
  }
  const record = panelState.record;
  const layer = Math.min(state.layer, record.weights.length - 1);
  const notes = [];
  if (layer !== state.layer) notes.push(`this run has ${record.weights.length} layer(s): showing layer ${layer + 1}`);
  if (state.step !== null && record.step !== state.step) notes.push(`nearest logged epoch: ${epochText(record.step)}`);
  const main = state.panels[state.run]?.record;
  if (name !== state.run && main && main.source !== record.source) {
    notes.push('a different probe sentence than the main run (other data settings)');
  }
  const shownLayer = state.view === 'raw' ? ` · layer ${layer + 1}` : ` · ${VIEWS[state.view]}`;
  header.append(el('span', {class: 'meta', text: `${epochText(record.step)} · ${KIND_NAMES[record.kind]}${shownLayer}`}));
  const redraw = () => draw();
  const top = [
    header,
    el('div', {class: 'sentence'}, [
      el('span', {class: 'label', text: 'source'}),
      el('span', {text: record.source}),
      el('span', {class: 'label', text: 'reference'}),
      el('span', {text: record.reference}),
    ]),
    ...notes.map((text) => el('div', {class: 'notice warning', text})),
  ];
  if (state.view === 'rollout') return rolloutPanel(name, record, panelState, top);
  if (state.view === 'why') return whyPanel(name, panelState, top);
  const view = headView(record, layer, panelState.hidden, panelState.focus, (focus) => {
    panelState.focus = focus;
  }, CAPTIONS[record.kind]);
  return el('section', {class: 'panel', 'data-run': name}, [
    ...top,
    headToggles(record.head_labels, panelState.hidden, redraw),
    el('h3', {}, ['Head view ', exportButtons(`${fileName(name)}_head_view`, () => view.querySelector('svg.head-view'))]),
    view,
    el('h3', {text: 'Model view: every layer and head, each scaled to its largest weight (click one to open it above)'}),
    modelView(record, layer, panelState.hidden, (pickedLayer, head) => {
      state.layer = pickedLayer;
      panelState.hidden = new Set(record.head_labels.map((_, h) => h).filter((h) => h !== head));
      redraw();
    }),
  ]);
}

function typedSection() {
  const listing = state.listing;
  const section = el('section', {class: 'typed'}, [el('h2', {text: 'Your own sentence'})]);
  if (!listing.translatable.length) {
    section.append(
      el('div', {
        class: 'notice',
        text:
          'No run here has an export yet: a run exports its SavedModel when it completes ' +
          '(export.enabled, or tx-export RUN_DIR afterwards).',
      })
    );
    return section;
  }
  const mainFolder = currentRun()?.folder;
  const typed = state.typed || {};
  const folder =
    typed.run || (listing.translatable.includes(mainFolder) ? mainFolder : listing.translatable[0]);
  const input = el('input', {
    type: 'text',
    class: 'sentence-input',
    placeholder: 'type a sentence in the source language',
    maxlength: listing.max_characters,
    value: state.draft ?? '',
    oninput: (event) => {
      state.draft = event.target.value;
    },
  });
  let runChoice = folder;
  const message = el('div', {class: 'typed-message' + (typed.error ? ' notice error' : ''), text: typed.error || ''});
  const go = async () => {
    const text = input.value;
    message.className = 'typed-message notice';
    message.textContent = 'Translating… (the first sentence loads the model)';
    try {
      const record = await getJson('./translate', {
        method: 'POST',
        headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({run: runChoice, text}),
      });
      record.kind = 'cross';
      state.typed = {run: runChoice, text, record, hidden: new Set(), focus: null, layer: 0, error: null};
    } catch (error) {
      state.typed = {...typed, run: runChoice, text, record: typed.record, error: error.message};
      draw();
      return;
    }
    draw();
    const shown = state.typed;
    try {
      shown.explain = await explain(runChoice, {text}, null);
    } catch (error) {
      shown.error = `the run's model could not explain this sentence: ${error.message}`;
    }
    if (state.typed === shown) draw();
  };
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') go();
  });
  section.append(
    el('div', {class: 'controls'}, [
      select('Run', listing.translatable.map((name) => [name, label(name)]), folder, (value) => {
        runChoice = value;
        state.typed = {...(state.typed || {}), run: value};
      }, {'data-control': 'typed-run'}),
      input,
      el('button', {class: 'primary', text: 'Translate', onclick: go}),
    ]),
    message
  );
  if (typed.record) section.append(typedResult(state.typed));
  return section;
}

function typedResult(typed) {
  const record = typed.record;
  const layer = Math.min(typed.layer, record.weights.length - 1);
  const redraw = () => draw();
  const typedView = headView(record, layer, typed.hidden, typed.focus, (focus) => {
    typed.focus = focus;
  }, ['output (query)', 'source (key)']);
  const parts = [
    el('div', {class: 'translation'}, [
      el('span', {class: 'label', text: `${label(typed.run)} translates`}),
      el('q', {text: typed.text}),
      el('span', {class: 'label', text: 'as'}),
      el('q', {class: 'translation-text', text: record.translation}),
    ]),
  ];
  if (record.head_labels.length === 1 && record.head_labels[0] === 'mean of heads') {
    parts.push(
      el('div', {
        class: 'notice',
        text: 'This export averaged the heads (export.attention=mean); export with export.attention=heads to see each head.',
      })
    );
  }
  parts.push(
    select(
      'Layer',
      record.weights.map((_, i) => [i, `layer ${i + 1}`]),
      layer,
      (value) => {
        typed.layer = Number(value);
        redraw();
      },
      {'data-control': 'typed-layer'}
    ),
    headToggles(record.head_labels, typed.hidden, redraw),
    el('h3', {}, [
      'Head view: cross-attention while writing each output token ',
      exportButtons(`${fileName(typed.run)}_typed_head_view`, () => typedView.querySelector('svg.head-view')),
    ]),
    typedView,
    el('h3', {text: 'Model view'}),
    modelView(record, layer, typed.hidden, (pickedLayer, head) => {
      typed.layer = pickedLayer;
      typed.hidden = new Set(record.head_labels.map((_, h) => h).filter((h) => h !== head));
      redraw();
    })
  );
  if (typed.explain) {
    const onKnockout = async () => {
      try {
        typed.explain = await explain(typed.run, {text: typed.text}, {why: typed.explain.why});
      } catch (error) {
        typed.error = error.message;
      }
      draw();
    };
    const started = performance.now();
    const why = explainView(typed.explain.body, typed.explain.why, onKnockout, `${fileName(typed.run)}_typed`);
    why.dataset.drawMs = (performance.now() - started).toFixed(1);
    parts.push(el('h3', {text: 'Why this word? (the run\'s Keras model, teacher-forced on this translation)'}), why);
  } else {
    parts.push(el('div', {class: 'notice explain-wait', text: 'Asking the run\'s model why…'}));
  }
  return el('div', {class: 'panel typed-result'}, parts);
}
