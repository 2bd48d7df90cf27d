import type { Portal } from './api.ts';
import { usageChart, type UsageDay } from './chart.ts';
import { KEY_ACTIVITY } from './documents.ts';
import { h, replace, time, uid } from './dom.ts';
import { generalError, submit } from './forms.ts';

interface KeyRequest {
  requestedAt: string;
  method: string;
  path: string;
  status: number;
  errorCode: string | null;
  durationMs: number;
  requestId: string;
  clientNetwork: string | null;
}

/** The usage chart's span: a month of days, today included. */
export const USAGE_DAYS = 30;

/** A key's request log (newest first, by status class and request id) and its requests per day. */
export function keyActivity(portal: Portal, key: { id: string; name: string }, close: () => void): HTMLElement {
  const statusId = uid('status');
  const requestIdId = uid('request-id');
  const status = h('select', { id: statusId }, ['', '2xx', '3xx', '4xx', '429', '5xx'].map((value) => h('option', { value }, value === '' ? 'Any' : value)));
  const requestId = h('input', { id: requestIdId, type: 'search', autocomplete: 'off', spellcheck: false });
  const general = generalError();
  const chart = h('div', {});
  const log = h('div', {});
  let requests: KeyRequest[] = [];

  function showLog(): void {
    const wanted = requestId.value.trim();
    const shown = wanted === '' ? requests : requests.filter((request) => request.requestId.includes(wanted));
    if (shown.length === 0) return replace(log, h('p', { role: 'status' }, 'No requests match.'));
    replace(
      log,
      h('p', { role: 'status', className: 'count' }, `${shown.length} request${shown.length === 1 ? '' : 's'}, newest first.`),
      h('table', {},
        h('caption', {}, `Requests with ${key.name}`),
        h('thead', {}, h('tr', {}, ['Time', 'Request', 'Status', 'Duration', 'Request id', 'Network'].map((name) => h('th', { scope: 'col' }, name)))),
        h('tbody', {}, shown.map((request) =>
          h('tr', {},
            h('td', {}, time(request.requestedAt)),
            h('td', {}, h('code', {}, `${request.method} ${request.path}`)),
            h('td', { className: `status s${String(request.status)[0]}xx` }, String(request.status), request.errorCode ? ` ${request.errorCode}` : ''),
            h('td', {}, `${Math.round(request.durationMs)} ms`),
            h('td', {}, h('code', {}, request.requestId)),
            h('td', {}, request.clientNetwork ?? '—'),
          ),
        )),
      ),
    );
  }

  async function load(): Promise<void> {
    await submit({ fields: { status: { error: general } }, general }, async () => {
      const data = await portal.run<{ integrations: { apiKeyRequests: KeyRequest[]; apiKeyUsage: UsageDay[] } }>(KEY_ACTIVITY, {
        id: key.id,
        status: status.value === '' ? null : status.value,
        days: USAGE_DAYS,
      });
      requests = data.integrations.apiKeyRequests;
      replace(chart, usageChart(data.integrations.apiKeyUsage, USAGE_DAYS));
      showLog();
    });
  }

  const section = h('section', { className: 'panel', 'aria-labelledby': `${statusId}-title` },
    h('h2', { id: `${statusId}-title`, tabIndex: -1 }, `Activity of ${key.name}`),
    h('h3', {}, `Requests per day, last ${USAGE_DAYS} days`),
    chart,
    h('h3', {}, 'Request log'),
    h('form', {
      className: 'filters',
      'aria-label': 'Filter requests',
      onsubmit: (event) => {
        event.preventDefault();
        void load();
      },
    },
      h('div', { className: 'field' }, h('label', { for: statusId }, 'Status'), status),
      h('div', { className: 'field' }, h('label', { for: requestIdId }, 'Request id'), requestId),
      h('button', { type: 'submit' }, 'Filter'),
      h('button', { type: 'button', onclick: () => void load() }, 'Refresh'),
      h('button', { type: 'button', onclick: close }, 'Close'),
    ),
    general,
    log,
  );
  void load();
  return section;
}
