/* global document, EventSource */
// The dashboard page: renders each state the server pushes over /api/events. No build step,
// no libraries: the charts are SVG polylines.

const roleDescriptions = {
  postgres: 'PostgreSQL: both services’ databases (orders, outbox, inbox)',
  kafka: 'Kafka broker: the order-events and payment-events topics',
  'order-api': 'order-service HTTP API: writes each order and its event in one transaction',
  'order-relay': 'publishes order-service’s outbox rows to Kafka',
  'order-consumer': 'applies payment events to orders, once each (processed_event)',
  'order-retention': 'deletes order-service’s finished rows once past their windows',
  'payment-api': 'payment-service HTTP API (read only)',
  'payment-consumer': 'stores order events in payment-service’s inbox, dropping duplicates',
  'payment-processor': 'works the inbox: takes the payment, writes PaymentCompleted to the outbox',
  'payment-relay': 'publishes payment-service’s outbox rows to Kafka',
  'payment-retention': 'deletes payment-service’s finished rows once past their windows',
  connect: 'Kafka Connect with Debezium: publishes both outboxes from the WAL',
};
// With RELAY_MODE=cdc the relay roles publish nothing themselves.
const cdcRoleDescriptions = {
  'order-relay': 'registers order-service’s CDC connector and watches its replication slot',
  'payment-relay': 'registers payment-service’s CDC connector and watches its replication slot',
};

const sumValues = (record) => Object.values(record).reduce((a, b) => a + b, 0);
const perService = (pick) => (point) =>
  Object.fromEntries(Object.entries(point.services).map(([name, s]) => [name, pick(s)]));

const perSlot = (pick) => (point) =>
  Object.fromEntries(Object.entries(point.replicationSlots).map(([name, s]) => [name, pick(s)]));

// Charts of one figure per service (or per replication slot), by id: [title, the figure].
const figureCharts = (per, figures) =>
  Object.entries(figures).map(([id, [title, figure]]) => ({ id, title, series: per(figure) }));

const ordersChart = {
  id: 'orders-accepted',
  title: 'Orders accepted per second',
  series: (p) => ({ accepted: p.ordersAcceptedPerSecond }),
};
// What says whether the outboxes get published. In CDC mode nothing marks a row published, so
// there is no backlog to count: each service's replication slot and its connector tell instead.
const publishingCharts = {
  polling: figureCharts(perService, {
    'outbox-backlog': ['Outbox backlog (unpublished rows)', (s) => s.unpublished],
    'oldest-unpublished': [
      'Oldest unpublished event (seconds)',
      (s) => s.oldestUnpublishedAgeSeconds,
    ],
  }),
  cdc: figureCharts(perSlot, {
    'slot-lag-seconds': ['Replication slot lag (seconds behind the WAL)', (s) => s.lagSeconds],
    'slot-lag-bytes': ['Replication slot lag (WAL bytes not confirmed)', (s) => s.lagBytes],
    'connector-running': [
      'CDC connector running (1 yes, 0 no)',
      (s) => (s.connectorRunning ? 1 : 0),
    ],
  }),
};
const otherCharts = [
  { id: 'consumer-lag', title: 'Consumer lag per group (messages)', series: (p) => p.consumerLag },
  {
    id: 'inbox-backlog',
    title: 'Inbox backlog (rows waiting)',
    series: perService((s) => s.inboxBacklog),
  },
  {
    id: 'trouble',
    title: 'Duplicates dropped, dead inbox rows, parked messages',
    series: (p) => ({
      'duplicates dropped': p.duplicatesDropped,
      'dead rows': sumValues(perService((s) => s.deadInboxRows)(p)),
      parked: sumValues(perService((s) => s.parkedMessages)(p)),
    }),
  },
  {
    id: 'failed-outbox',
    title: 'FAILED outbox rows (set aside)',
    series: perService((s) => s.failedOutboxRows),
  },
];
const chartsFor = (relayMode) => [ordersChart, ...publishingCharts[relayMode], ...otherCharts];
const colors = ['#0969da', '#bf3989', '#1a7f37', '#bc4c00', '#8250df', '#57606a'];

const el = (tag, attributes = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
  node.append(...children);
  return node;
};
const svg = (tag, attributes) => {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
  return node;
};
const format = (n) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

const busy = new Set();

async function post(path, body) {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    throw new Error(problem.error ?? `${response.status}`);
  }
  return response.json();
}

async function act(name, action) {
  busy.add(name);
  render(lastState);
  try {
    await post(`/api/components/${encodeURIComponent(name)}/${action}`);
    document.getElementById('problems').textContent = '';
  } catch (error) {
    document.getElementById('problems').textContent = `${action} ${name}: ${error.message}`;
  } finally {
    busy.delete(name);
  }
}

const roleDescription = (role, kind, relayMode) =>
  (relayMode === 'cdc' ? cdcRoleDescriptions[role] : undefined) ?? roleDescriptions[role] ?? kind;

// Rows are kept and updated in place: a button replaced under the pointer would lose its click.
const componentRows = new Map();

function componentRow(name, kind, relayMode) {
  const kill = el('button', { class: 'kill', 'data-action': 'kill' }, 'Kill');
  const start = el('button', { 'data-action': 'start' }, 'Start');
  kill.onclick = () => act(name, 'kill');
  start.onclick = () => act(name, 'start');
  const row = el(
    'tr',
    { 'data-component': name },
    el('td', {}, el('b', {}, name)),
    el('td', { class: 'muted' }, roleDescription(name.replace(/-\d+$/, ''), kind, relayMode)),
    el('td', {}, el('span', { class: 'state' })),
    el('td', { class: 'pid' }),
    el('td', {}, kill, start),
  );
  return { row, kill, start, state: row.querySelector('.state'), pid: row.querySelector('.pid') };
}

function renderComponents(components, relayMode) {
  const body = document.querySelector('#components tbody');
  for (const c of components) {
    let view = componentRows.get(c.name);
    if (!view) {
      view = componentRow(c.name, c.kind, relayMode);
      componentRows.set(c.name, view);
      body.append(view.row);
    }
    const state = busy.has(c.name) ? 'busy' : c.running ? 'up' : 'down';
    view.state.dataset.state = state;
    view.state.textContent = state === 'busy' ? 'working…' : state;
    view.pid.textContent = c.pid === undefined || !c.running ? '—' : String(c.pid);
    view.kill.disabled = !c.running || busy.has(c.name);
    view.start.disabled = c.running || busy.has(c.name);
  }
}

function renderChart(chart, history) {
  const names = [...new Set(history.flatMap((p) => Object.keys(chart.series(p))))].sort();
  const values = history.map((p) => chart.series(p));
  const max = Math.max(1, ...values.flatMap((v) => Object.values(v)));
  const width = 600;
  const height = 120;
  const first = history[0]?.at ?? 0;
  const span = Math.max(60_000, (history.at(-1)?.at ?? 0) - first);
  const plot = svg('svg', { viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: 'none' });
  plot.append(svg('line', { x1: 0, y1: height - 1, x2: width, y2: height - 1, stroke: '#d0d7de' }));
  const legend = el('div', { class: 'legend' });
  names.forEach((name, i) => {
    const color = colors[i % colors.length];
    const points = history
      .map((p, j) => {
        const v = values[j][name];
        if (v === undefined) return undefined;
        const x = ((p.at - first) / span) * width;
        const y = height - 2 - (v / max) * (height - 6);
        return `${x.toFixed(1)},${y.toFixed(1)}`;
      })
      .filter(Boolean);
    plot.append(
      svg('polyline', { points: points.join(' '), fill: 'none', stroke: color, 'stroke-width': 2 }),
    );
    const latest = values.at(-1)?.[name];
    legend.append(
      el(
        'span',
        {},
        el('span', { class: 'swatch', style: `background:${color}` }),
        `${name} `,
        el(
          'span',
          { class: 'value', 'data-series': name },
          latest === undefined ? '—' : format(latest),
        ),
      ),
    );
  });
  const box = el(
    'div',
    { class: 'chart', id: `chart-${chart.id}` },
    el('h3', {}, chart.title),
    plot,
    legend,
  );
  const scale = el(
    'div',
    { class: 'muted' },
    `max ${format(max)} · last ${Math.round(span / 1000)} s`,
  );
  box.append(scale);
  return box;
}

function renderOrders(orders, error) {
  document.getElementById('orders-error').textContent = error
    ? `orders not readable (${error}); showing the last orders seen`
    : '';
  const body = document.querySelector('#orders tbody');
  body.replaceChildren(
    ...orders.map((order) => {
      const start = Date.parse(order.createdAt);
      const steps = order.journey.map((step) =>
        el('span', { title: step.eventType }, `${step.status} +${Date.parse(step.at) - start} ms`),
      );
      const journey = el('td', { class: 'journey' });
      steps.forEach((step, i) => journey.append(...(i === 0 ? [step] : [' → ', step])));
      return el(
        'tr',
        { 'data-order': order.id, 'data-status': order.status },
        el('td', {}, el('code', { title: order.id }, order.id.slice(0, 8))),
        el('td', {}, `${(order.amount / 100).toFixed(2)} ${order.currency}`),
        el('td', { class: `status-${order.status}` }, order.status),
        journey,
        el(
          'td',
          { class: 'duplicates', 'data-duplicates': String(order.duplicatesAbsorbed) },
          `duplicates absorbed: ${order.duplicatesAbsorbed}`,
        ),
      );
    }),
  );
}

let lastState;
function render(state) {
  if (!state) return;
  lastState = state;
  renderComponents(state.components, state.relayMode);
  const mode = document.getElementById('relay-mode');
  mode.dataset.mode = state.relayMode;
  mode.textContent =
    state.relayMode === 'cdc'
      ? 'RELAY_MODE=cdc: Debezium on Kafka Connect publishes the outboxes from the WAL, so each ' +
        'service’s replication slot is charted in place of its outbox backlog.'
      : '';
  const latest = state.history.at(-1);
  document.getElementById('problems').dataset.stalled = String(latest?.stalledWorkers.length ?? 0);
  if (
    latest &&
    latest.stalledWorkers.length > 0 &&
    !document.getElementById('problems').textContent
  ) {
    document.getElementById('problems').textContent =
      `stalled: ${latest.stalledWorkers.join(', ')}`;
  }
  document
    .getElementById('charts')
    .replaceChildren(...chartsFor(state.relayMode).map((c) => renderChart(c, state.history)));
  renderOrders(state.orders, state.ordersError);
  document.getElementById('duplicates').textContent =
    `Duplicate deliveries absorbed so far: ${latest?.duplicatesDropped ?? 0} (dropped by the inbox or processed_event, never applied twice).`;
  const load = state.load;
  document.getElementById('load-status').textContent = load.running
    ? `sending ${load.ordersPerSecond}/s · ${load.sent} sent, ${load.failed} not accepted`
    : `no load · ${load.sent} sent, ${load.failed} not accepted`;
  document.getElementById('load-status').dataset.running = String(load.running);
}

function connect() {
  const connection = document.getElementById('connection');
  const events = new EventSource('/api/events');
  events.onopen = () => {
    connection.dataset.state = 'live';
    connection.textContent = 'live: updates every second';
  };
  events.onmessage = (message) => render(JSON.parse(message.data));
  events.onerror = () => {
    connection.dataset.state = 'lost';
    connection.textContent = 'connection to the dashboard lost: retrying…';
  };
}

document.getElementById('load').onsubmit = async (event) => {
  event.preventDefault();
  const rate = Number(document.getElementById('load-rate').value);
  await post('/api/load', { ordersPerSecond: rate });
};
document.getElementById('load-stop').onclick = () => post('/api/load', { ordersPerSecond: 0 });
connect();
