import type { Portal } from './api.ts';
import { DELIVERIES, RECOVER, RESEND } from './documents.ts';
import { h, replace, time, uid } from './dom.ts';
import { field, generalError, submit } from './forms.ts';

interface Attempt {
  series: number;
  number: number | null;
  manual: boolean;
  startedAt: string;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
}

interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  test: boolean;
  state: string;
  attempts: number;
  nextAttemptAt: string | null;
  log: Attempt[];
}

/** One attempt in words: the receiver's status or the failure's class, and how long it took. */
export function describeAttempt(result: { ok: boolean; httpStatus: number | null; error: string | null; durationMs: number }): string {
  const outcome = result.httpStatus !== null ? `the receiver answered ${result.httpStatus}` : `failed: ${result.error ?? 'no answer'}`;
  return `${result.ok ? 'delivered' : 'not delivered'}, ${outcome}, in ${Math.round(result.durationMs)} ms`;
}

/** An endpoint's newest deliveries with each attempt, a resend per delivery, and the recovery of failed ones since a time. */
export function deliveriesPanel(portal: Portal, endpoint: { id: string; url: string }, close: () => void): HTMLElement {
  const titleId = uid('deliveries');
  const outcome = h('div', { 'aria-live': 'polite' });
  const list = h('div', {});
  const general = generalError();

  async function load(): Promise<void> {
    const data = await portal.run<{ integrations: { webhookDeliveries: Delivery[] } }>(DELIVERIES, { endpointId: endpoint.id });
    const deliveries = data.integrations.webhookDeliveries;
    if (deliveries.length === 0) return replace(list, h('p', {}, 'No deliveries yet.'));
    replace(list, h('table', {},
      h('caption', {}, `Deliveries to ${endpoint.url}, newest first`),
      h('thead', {}, h('tr', {}, ['Event', 'State', 'Attempts', 'Actions'].map((name) => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, deliveries.map(row)),
    ));
  }

  function row(delivery: Delivery): HTMLTableRowElement {
    const eventId = uid('event');
    return h('tr', {},
      h('th', { scope: 'row', id: eventId }, delivery.eventType, delivery.test ? ' (test)' : '', h('br', {}), h('code', {}, delivery.eventId)),
      h('td', {}, delivery.state, delivery.nextAttemptAt ? h('span', { className: 'note' }, [' next ', time(delivery.nextAttemptAt)]) : null),
      h('td', {}, h('table', { className: 'attempts' },
        h('caption', { className: 'visually-hidden' }, `Attempts of ${delivery.eventId}`),
        h('thead', {}, h('tr', {}, ['Time', 'Status', 'Duration', 'Failure'].map((name) => h('th', { scope: 'col' }, name)))),
        h('tbody', {}, delivery.log.map((attempt) => h('tr', {},
          h('td', {}, time(attempt.startedAt), attempt.manual ? ' (manual)' : ''),
          h('td', {}, attempt.httpStatus === null ? '—' : String(attempt.httpStatus)),
          h('td', {}, `${Math.round(attempt.durationMs)} ms`),
          h('td', {}, attempt.error ?? '—'),
        ))),
      )),
      h('td', { className: 'actions' },
        portal.readOnly ? null : h('button', {
          type: 'button',
          'aria-describedby': eventId,
          onclick: () => void submit({ fields: {}, general }, async () => {
            const { resendWebhookDelivery: result } = await portal.run<{ resendWebhookDelivery: Parameters<typeof describeAttempt>[0] }>(RESEND, { endpointId: endpoint.id, eventId: delivery.eventId });
            replace(outcome, h('p', { role: 'status' }, `Resent ${delivery.eventId}: ${describeAttempt(result)}.`));
            await load();
          }),
        }, 'Resend'),
      ),
    );
  }

  const since = field('Since', { type: 'text', required: true, autocomplete: 'off' }, 'An ISO 8601 time with its offset, e.g. 2026-11-20T08:00:00Z: the failed deliveries of events since then are sent again.');
  const recoverForm = portal.readOnly ? null : h('form', {
    className: 'filters',
    'aria-label': 'Recover failed deliveries',
    onsubmit: (event) => {
      event.preventDefault();
      void submit({ fields: { since }, general }, async () => {
        const { recoverWebhookDeliveries } = await portal.run<{ recoverWebhookDeliveries: { recovered: number } }>(RECOVER, { id: endpoint.id, since: since.input.value.trim() });
        replace(outcome, h('p', { role: 'status' }, `${recoverWebhookDeliveries.recovered} failed deliveries are sent again.`));
        await load();
      });
    },
  }, since.element, h('button', { type: 'submit' }, 'Recover'));

  void load().catch((error: unknown) => replace(list, h('p', { role: 'alert' }, error instanceof Error ? error.message : String(error))));
  return h('section', { className: 'panel', 'aria-labelledby': titleId },
    h('h2', { id: titleId, tabIndex: -1 }, `Deliveries to ${endpoint.url}`),
    h('div', { className: 'actions' },
      h('button', { type: 'button', onclick: () => void load() }, 'Refresh'),
      h('button', { type: 'button', onclick: close }, 'Close'),
    ),
    recoverForm, general, outcome, list,
  );
}
