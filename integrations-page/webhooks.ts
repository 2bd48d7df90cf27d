import { EVENT_TYPES } from '../src/webhooks/event-types.ts';
import type { Portal } from './api.ts';
import { deliveriesPanel, describeAttempt } from './deliveries.ts';
import { ADD_ENDPOINT, ENDPOINTS, ENABLE_ENDPOINT, REMOVE_ENDPOINT, ROTATE_SECRET, SEND_TEST, UPDATE_ENDPOINT } from './documents.ts';
import { h, replace, shownOnce, time, uid } from './dom.ts';
import { choice, confirmDialog, field, generalError, submit } from './forms.ts';

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  createdAt: string;
  state: string;
  disabledReason: string | null;
  previousSecretUntil: string | null;
  health: { state: string; consecutiveFailures: number; failingSince: string | null; lastFailure: string | null } | null;
}

function health(endpoint: Endpoint): Node {
  const { health } = endpoint;
  if (!health) return document.createTextNode('—');
  const failing = health.consecutiveFailures > 0 ? `, ${health.consecutiveFailures} failure${health.consecutiveFailures === 1 ? '' : 's'} in a row` : '';
  return h('span', {}, `${health.state}${failing}`, health.lastFailure ? h('span', { className: 'note' }, ` (last: ${health.lastFailure})`) : null);
}

/** The Webhooks view: the endpoints, their health and events, what can be done to each, and their deliveries. */
export function webhooksView(portal: Portal): HTMLElement {
  const view = h('div', { className: 'view' });
  const top = h('div', { className: 'above-table' });
  const fresh = h('div', { 'aria-live': 'polite' });
  const list = h('div', {});
  const detail = h('div', {});

  async function load(): Promise<void> {
    const data = await portal.run<{ integrations: { webhookEndpoints: Endpoint[] } }>(ENDPOINTS);
    const endpoints = data.integrations.webhookEndpoints;
    if (endpoints.length === 0) return replace(list, h('p', {}, 'No endpoints yet.'));
    replace(list, h('table', {},
      h('caption', {}, 'Webhook endpoints'),
      h('thead', {}, h('tr', {}, ['URL', 'Events', 'State', 'Health', 'Created', 'Actions'].map((name) => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, endpoints.map(row)),
    ));
  }

  /** Runs an action of a row, its outcome (or the API's message) shown above the table. */
  function act(action: () => Promise<void>): void {
    const message = generalError();
    replace(fresh, message);
    void submit({ fields: {}, general: message }, action);
  }

  function row(endpoint: Endpoint): HTMLTableRowElement {
    const urlId = uid('endpoint');
    // A removed endpoint keeps its history (its deliveries) and takes no change.
    const may = !portal.readOnly && endpoint.state !== 'removed';
    const button = (label: string, onclick: () => void, className = '') => h('button', { type: 'button', 'aria-describedby': urlId, className, onclick }, label);
    return h('tr', {},
      h('th', { scope: 'row', id: urlId }, h('code', {}, endpoint.url)),
      h('td', {}, endpoint.events.join(', ')),
      h('td', {}, endpoint.state, endpoint.disabledReason ? h('span', { className: 'note' }, ` (${endpoint.disabledReason})`) : null),
      h('td', {}, health(endpoint)),
      h('td', {}, time(endpoint.createdAt)),
      h('td', { className: 'actions' },
        button('Deliveries', () => {
          replace(detail, deliveriesPanel(portal, endpoint, () => replace(detail)));
          detail.querySelector('h2')?.focus();
        }),
        may ? button('Send test event', () => act(async () => sendTest(endpoint))) : null,
        may ? button('Edit', () => openForm(endpoint)) : null,
        may && endpoint.state === 'disabled' ? button('Enable', () => act(async () => {
          const { enableWebhookEndpoint } = await portal.run<{ enableWebhookEndpoint: { resumed: number } }>(ENABLE_ENDPOINT, { id: endpoint.id });
          replace(fresh, h('p', { role: 'status' }, `${endpoint.url} is enabled again; ${enableWebhookEndpoint.resumed} deliveries resume.`));
          await load();
        })) : null,
        may ? button('Rotate secret', () => void rotateSecret(endpoint)) : null,
        may ? button('Remove', () => void remove(endpoint), 'danger') : null,
      ),
    );
  }

  async function sendTest(endpoint: Endpoint): Promise<void> {
    replace(fresh, h('p', { role: 'status' }, `Sending a test event to ${endpoint.url}…`));
    const { sendWebhookTestEvent: result } = await portal.run<{ sendWebhookTestEvent: Parameters<typeof describeAttempt>[0] & { type: string; event: string; answerStart: string | null } }>(SEND_TEST, { id: endpoint.id });
    replace(fresh, h('div', { role: 'status', className: result.ok ? 'outcome ok' : 'outcome failed' },
      h('p', {}, `Test event ${result.type} (${result.event}): ${describeAttempt(result)}`),
      result.answerStart ? h('pre', { className: 'answer', 'aria-label': 'The receiver answered' }, result.answerStart) : null,
    ));
    await load();
  }

  async function rotateSecret(endpoint: Endpoint): Promise<void> {
    if (!(await confirmDialog(`Rotate the signing secret of ${endpoint.url}?`, 'A new secret signs every delivery from now on; the old one signs too for 24 hours, while the receiver is updated.', 'Rotate secret'))) return;
    act(async () => {
      const { rotateWebhookSecret } = await portal.run<{ rotateWebhookSecret: { secret: string } }>(ROTATE_SECRET, { id: endpoint.id });
      replace(fresh, shownOnce(`New signing secret of ${endpoint.url}`, rotateWebhookSecret.secret, 'This is the only time the secret is shown: copy it now.'));
      await load();
    });
  }

  async function remove(endpoint: Endpoint): Promise<void> {
    if (!(await confirmDialog(`Remove ${endpoint.url}?`, 'It receives no further deliveries. This cannot be undone.', 'Remove endpoint'))) return;
    act(async () => {
      await portal.run(REMOVE_ENDPOINT, { id: endpoint.id });
      replace(fresh, h('p', { role: 'status' }, `${endpoint.url} is removed.`));
      replace(detail);
      await load();
    });
  }

  function openForm(editing?: Endpoint): void {
    const url = field('URL', { type: 'url', required: true, autocomplete: 'off', value: editing?.url ?? '', placeholder: 'https://' }, 'An https:// address that answers 2xx to each event.');
    const events = choice('Event types', EVENT_TYPES, editing?.events ?? ['booking.created']);
    const general = generalError();
    const feedback = { fields: { url, events: { error: events.error } }, general };
    const form: HTMLFormElement = h('form', {
      className: 'panel',
      'aria-label': editing ? `Edit ${editing.url}` : 'Add endpoint',
      onsubmit: (event) => {
        event.preventDefault();
        void submit(feedback, async () => {
          const input = { url: url.input.value.trim(), events: events.chosen() };
          if (editing) {
            await portal.run(UPDATE_ENDPOINT, { id: editing.id, input });
            form.remove();
            replace(fresh, h('p', { role: 'status' }, `${input.url} is saved.`));
          } else {
            const { addWebhookEndpoint } = await portal.run<{ addWebhookEndpoint: { secret: string } }>(ADD_ENDPOINT, { input });
            form.remove();
            replace(fresh, shownOnce(`Signing secret of ${input.url}`, addWebhookEndpoint.secret, 'This is the only time the secret is shown: copy it now, the receiver verifies each delivery with it.'));
            fresh.querySelector('input')?.focus();
          }
          await load();
        });
      },
    },
      h('h2', {}, editing ? `Edit ${editing.url}` : 'Add endpoint'),
      url.element, events.element, general,
      h('div', { className: 'actions' },
        h('button', { type: 'submit' }, 'Save endpoint'),
        h('button', { type: 'button', onclick: () => form.remove() }, 'Cancel'),
      ),
    );
    replace(fresh, form);
    url.input.focus();
  }

  if (!portal.readOnly) replace(top, h('button', { type: 'button', onclick: () => openForm() }, 'Add endpoint'));
  view.append(top, fresh, list, detail);
  void load().catch((error: unknown) => replace(list, h('p', { role: 'alert' }, error instanceof Error ? error.message : String(error))));
  return view;
}
