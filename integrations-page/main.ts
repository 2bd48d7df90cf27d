import { Ended, forgetSession, openLink, Portal, storedSession, type Session } from './api.ts';
import { h, replace } from './dom.ts';
import { feedsView } from './feeds.ts';
import { keysView } from './keys.ts';
import { webhooksView } from './webhooks.ts';
import './page.css';

const root = document.getElementById('integrations')!;

/** A link that cannot be opened, or a session that ended: that alone, nothing else of the page. */
function showEnded(message: string, heading = 'This session has ended'): void {
  document.title = `Integrations: ${heading.toLowerCase()}`;
  replace(root, h('main', { className: 'ended' }, h('h1', {}, heading), h('p', {}, message)));
}
const showRefusedLink = (message: string) => showEnded(message, 'This link cannot be used');

const VIEWS = [
  { name: 'Keys', build: keysView },
  { name: 'Webhooks', build: webhooksView },
  { name: 'Calendar feeds', build: feedsView },
] as const;

/** The three views as tabs (arrow keys, Home and End move between them, as the ARIA tabs pattern says). */
function showArea(session: Session): void {
  const portal = new Portal(session, showEnded);
  const panel = h('div', { role: 'tabpanel', id: 'view', tabIndex: 0 });
  const tabs = VIEWS.map((view, index) =>
    h('button', { type: 'button', role: 'tab', id: `tab-${index}`, 'aria-controls': 'view', onclick: () => select(index) }, view.name),
  );
  function select(index: number, focus = false): void {
    tabs.forEach((tab, at) => {
      tab.setAttribute('aria-selected', String(at === index));
      tab.tabIndex = at === index ? 0 : -1;
    });
    panel.setAttribute('aria-labelledby', tabs[index]!.id);
    replace(panel, VIEWS[index]!.build(portal));
    if (focus) tabs[index]!.focus();
  }
  const tablist = h('div', {
    role: 'tablist',
    'aria-label': 'Integrations',
    onkeydown: (event) => {
      const key = (event as KeyboardEvent).key;
      const at = tabs.findIndex((tab) => tab.getAttribute('aria-selected') === 'true');
      const next = key === 'ArrowRight' ? (at + 1) % tabs.length : key === 'ArrowLeft' ? (at + tabs.length - 1) % tabs.length : key === 'Home' ? 0 : key === 'End' ? tabs.length - 1 : -1;
      if (next === -1) return;
      event.preventDefault();
      select(next, true);
    },
  }, tabs);
  document.title = `Integrations of ${session.workspace.name}`;
  replace(root,
    h('header', {},
      h('h1', {}, `Integrations of ${session.workspace.name}`),
      h('p', { className: 'who' }, `Signed in as ${session.member.email} (${session.member.role}); this session ends at ${new Date(session.expiresAt).toLocaleString()}.`),
      session.readOnly ? h('p', { className: 'read-only' }, 'Read-only: you can see everything here and change nothing.') : null,
    ),
    h('main', {}, tablist, panel),
  );
  select(0);
}

/**
 * The link's secret is in the fragment, which no server, proxy or log sees; it is taken out of the
 * address at once (history, bookmarks, a reload) and traded for a session, kept in this tab only.
 */
async function start(): Promise<void> {
  const secret = decodeURIComponent(location.hash.slice(1));
  if (secret !== '') {
    history.replaceState(null, '', location.pathname + location.search);
    forgetSession();
    try {
      showArea(await openLink(secret));
    } catch (error) {
      showRefusedLink(error instanceof Error ? error.message : String(error));
    }
    return;
  }
  const session = storedSession();
  if (session) return showArea(session);
  showRefusedLink('Open this page with the link you were given: each link opens once. Ask for a new one.');
}

void start().catch((error: unknown) => {
  if (!(error instanceof Ended)) showEnded(error instanceof Error ? error.message : String(error));
});
