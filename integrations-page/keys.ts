import { SCOPES } from '../src/auth/scopes.ts';
import type { Portal } from './api.ts';
import { CREATE_KEY, KEYS, REVOKE_KEY, ROTATE_KEY, UPDATE_KEY } from './documents.ts';
import { h, replace, shownOnce, time, uid } from './dom.ts';
import { choice, confirmDialog, field, generalError, submit } from './forms.ts';
import { keyActivity } from './key-activity.ts';

interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  last4: string;
  createdAt: string;
  expiresAt: string | null;
  allowedIps: string[] | null;
  lastUsedAt: string | null;
  lastUsedNetwork: string | null;
  state: string;
}

/** `90d` (or 12h, 2w) is a lifetime from now; anything else is a date or time the API reads. */
const LIFETIME = /^\s*\d+\s*[mhdw]\s*$/;

/** The Keys view: the workspace's keys, a form for a new one, each key's log and usage. */
export function keysView(portal: Portal): HTMLElement {
  const view = h('div', { className: 'view' });
  const top = h('div', { className: 'above-table' });
  const fresh = h('div', { 'aria-live': 'polite' });
  const list = h('div', {});
  const detail = h('div', {});

  async function load(): Promise<void> {
    const data = await portal.run<{ integrations: { apiKeys: ApiKey[] } }>(KEYS);
    const keys = data.integrations.apiKeys;
    if (keys.length === 0) return replace(list, h('p', {}, 'No keys yet.'));
    replace(
      list,
      h('table', {},
        h('caption', {}, 'API keys'),
        h('thead', {}, h('tr', {}, ['Name', 'Scopes', 'Created', 'Last used', 'Expires', 'Allowed IPs', 'State', 'Actions'].map((name) => h('th', { scope: 'col' }, name)))),
        h('tbody', {}, keys.map(row)),
      ),
    );
  }

  function row(key: ApiKey): HTMLTableRowElement {
    const nameId = uid('key');
    const active = key.state === 'active';
    return h('tr', {},
      h('th', { scope: 'row', id: nameId }, key.name, h('span', { className: 'last4' }, ` …${key.last4}`)),
      h('td', {}, key.scopes.join(', ')),
      h('td', {}, time(key.createdAt)),
      h('td', {}, time(key.lastUsedAt), key.lastUsedNetwork ? h('span', { className: 'network' }, ` from ${key.lastUsedNetwork}`) : null),
      h('td', {}, key.expiresAt ? time(key.expiresAt) : 'never'),
      h('td', {}, key.allowedIps?.join(', ') || 'any'),
      h('td', {}, key.state),
      h('td', { className: 'actions' },
        h('button', { type: 'button', 'aria-describedby': nameId, onclick: () => showActivity(key) }, 'Requests'),
        active && !portal.readOnly ? h('button', { type: 'button', 'aria-describedby': nameId, onclick: () => openForm(key) }, 'Edit') : null,
        active && !portal.readOnly ? h('button', { type: 'button', 'aria-describedby': nameId, onclick: () => void rotate(key) }, 'Rotate') : null,
        active && !portal.readOnly ? h('button', { type: 'button', className: 'danger', 'aria-describedby': nameId, onclick: () => void revoke(key) }, 'Revoke') : null,
      ),
    );
  }

  function showActivity(key: ApiKey): void {
    replace(detail, keyActivity(portal, key, () => replace(detail)));
    detail.querySelector('h2')?.focus();
  }

  async function rotate(key: ApiKey): Promise<void> {
    const sure = await confirmDialog(`Rotate ${key.name}?`, 'A new key replaces this one, with the same name, scopes and allowed IPs. The old key is refused at once.', 'Rotate key');
    if (!sure) return;
    const message = generalError();
    replace(fresh, message);
    await submit({ fields: {}, general: message }, async () => {
      const { rotateApiKey } = await portal.run<{ rotateApiKey: { key: string } }>(ROTATE_KEY, { id: key.id });
      replace(fresh, shownOnce(`New key for ${key.name}`, rotateApiKey.key, 'This is the only time the key is shown: copy it now.'));
      await load();
    });
  }

  async function revoke(key: ApiKey): Promise<void> {
    const sure = await confirmDialog(`Revoke ${key.name}?`, 'Every request with this key is refused from now on. This cannot be undone.', 'Revoke key');
    if (!sure) return;
    const message = generalError();
    replace(fresh, message);
    await submit({ fields: {}, general: message }, async () => {
      await portal.run(REVOKE_KEY, { id: key.id });
      replace(fresh, h('p', { role: 'status' }, `${key.name} is revoked.`));
      await load();
    });
  }

  /** The form of a new key, or of a key's changes: only what differs from the key is sent. */
  function openForm(editing?: ApiKey): void {
    const name = field('Name', { type: 'text', required: true, maxLength: 100, autocomplete: 'off', value: editing?.name ?? '' });
    const scopes = choice('Scopes', SCOPES, editing?.scopes ?? []);
    const expires = field('Expires', { type: 'text', autocomplete: 'off', value: editing?.expiresAt ?? '' }, 'Optional: a lifetime such as 90d, or a date and time such as 2027-06-30T00:00:00Z. Empty: never.');
    const ips = field('Allowed IPs', { type: 'text', autocomplete: 'off', value: editing?.allowedIps?.join(', ') ?? '' }, 'Optional: addresses or CIDR ranges, separated by commas. Empty: any address.');
    const general = generalError();
    const feedback = {
      fields: {
        name: name, scopes: { error: scopes.error }, expiresIn: expires, expiresAt: expires, neverExpires: expires, allowedIps: ips, 'allowedIps: null': ips,
      },
      general,
    };
    const title = editing ? `Edit ${editing.name}` : 'New key';
    const form: HTMLFormElement = h('form', {
      className: 'panel',
      'aria-label': title,
      onsubmit: (event) => {
        event.preventDefault();
        void submit(feedback, async () => {
          const lifetime = expires.input.value.trim();
          const allowed = ips.input.value.split(/[\s,]+/).filter((entry) => entry !== '');
          const expiry = lifetime === '' ? {} : LIFETIME.test(lifetime) ? { expiresIn: lifetime } : { expiresAt: lifetime };
          if (editing) {
            const input = {
              name: name.input.value,
              scopes: scopes.chosen(),
              ...(lifetime === (editing.expiresAt ?? '') ? {} : lifetime === '' ? { neverExpires: true } : expiry),
              ...(allowed.join(',') === (editing.allowedIps ?? []).join(',') ? {} : { allowedIps: allowed.length > 0 ? allowed : null }),
            };
            await portal.run(UPDATE_KEY, { id: editing.id, input });
            form.remove();
            replace(fresh, h('p', { role: 'status' }, `${input.name} is saved.`));
          } else {
            const input = { name: name.input.value, scopes: scopes.chosen(), ...expiry, ...(allowed.length > 0 ? { allowedIps: allowed } : {}) };
            const { createApiKey } = await portal.run<{ createApiKey: { key: string } }>(CREATE_KEY, { input });
            form.remove();
            replace(fresh, shownOnce(`New key ${input.name}`, createApiKey.key, 'This is the only time the key is shown: copy it now.'));
            fresh.querySelector('input')?.focus();
          }
          await load();
        });
      },
    },
      h('h2', {}, title),
      name.element, scopes.element, expires.element, ips.element, general,
      h('div', { className: 'actions' },
        h('button', { type: 'submit' }, editing ? 'Save key' : 'Create key'),
        h('button', { type: 'button', onclick: () => form.remove() }, 'Cancel'),
      ),
    );
    replace(fresh, form);
    name.input.focus();
  }

  if (!portal.readOnly) replace(top, h('button', { type: 'button', onclick: () => openForm() }, 'New key'));
  view.append(top, fresh, list, detail);
  void load().catch((error: unknown) => replace(list, h('p', { role: 'alert' }, error instanceof Error ? error.message : String(error))));
  return view;
}
