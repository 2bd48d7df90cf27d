import type { Portal } from './api.ts';
import { CREATE_FEED, FEEDS, REVOKE_FEED } from './documents.ts';
import { h, replace, shownOnce, time, uid } from './dom.ts';
import { confirmDialog, field, generalError, submit } from './forms.ts';

interface Feed {
  id: string;
  name: string;
  last4: string;
  createdAt: string;
  state: string;
}

/** The Calendar feeds view: the feeds, a new one (its URL shown once), revoking one. */
export function feedsView(portal: Portal): HTMLElement {
  const view = h('div', { className: 'view' });
  const top = h('div', { className: 'above-table' });
  const fresh = h('div', { 'aria-live': 'polite' });
  const list = h('div', {});

  async function load(): Promise<void> {
    const data = await portal.run<{ integrations: { calendarFeeds: Feed[] } }>(FEEDS);
    const feeds = data.integrations.calendarFeeds;
    if (feeds.length === 0) return replace(list, h('p', {}, 'No calendar feeds yet.'));
    replace(list, h('table', {},
      h('caption', {}, 'Calendar feeds'),
      h('thead', {}, h('tr', {}, ['Name', 'Created', 'State', 'Actions'].map((name) => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, feeds.map((feed) => {
        const nameId = uid('feed');
        return h('tr', {},
          h('th', { scope: 'row', id: nameId }, feed.name, h('span', { className: 'last4' }, ` …${feed.last4}`)),
          h('td', {}, time(feed.createdAt)),
          h('td', {}, feed.state),
          h('td', { className: 'actions' },
            feed.state === 'active' && !portal.readOnly ? h('button', { type: 'button', className: 'danger', 'aria-describedby': nameId, onclick: () => void revoke(feed) }, 'Revoke') : null,
          ),
        );
      })),
    ));
  }

  async function revoke(feed: Feed): Promise<void> {
    if (!(await confirmDialog(`Revoke ${feed.name}?`, 'Calendars subscribed to this feed stop updating. This cannot be undone.', 'Revoke feed'))) return;
    const general = generalError();
    replace(fresh, general);
    await submit({ fields: {}, general }, async () => {
      await portal.run(REVOKE_FEED, { id: feed.id });
      replace(fresh, h('p', { role: 'status' }, `${feed.name} is revoked.`));
      await load();
    });
  }

  function openForm(): void {
    const name = field('Name', { type: 'text', autocomplete: 'off', maxLength: 100 }, 'Optional: what the feed is for.');
    const general = generalError();
    const form: HTMLFormElement = h('form', {
      className: 'panel',
      'aria-label': 'New feed',
      onsubmit: (event) => {
        event.preventDefault();
        void submit({ fields: { name }, general }, async () => {
          const given = name.input.value.trim();
          const { createCalendarFeed } = await portal.run<{ createCalendarFeed: { path: string } }>(CREATE_FEED, { name: given === '' ? null : given });
          form.remove();
          replace(fresh, shownOnce('Feed URL', new URL(createCalendarFeed.path, location.origin).href, 'This is the only time the URL is shown: copy it into the calendar now.'));
          fresh.querySelector('input')?.focus();
          await load();
        });
      },
    },
      h('h2', {}, 'New feed'),
      name.element, general,
      h('div', { className: 'actions' },
        h('button', { type: 'submit' }, 'Create feed'),
        h('button', { type: 'button', onclick: () => form.remove() }, 'Cancel'),
      ),
    );
    replace(fresh, form);
    name.input.focus();
  }

  if (!portal.readOnly) replace(top, h('button', { type: 'button', onclick: openForm }, 'New feed'));
  view.append(top, fresh, list);
  void load().catch((error: unknown) => replace(list, h('p', { role: 'alert' }, error instanceof Error ? error.message : String(error))));
  return view;
}
