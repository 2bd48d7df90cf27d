import { h } from './dom.ts';

export interface UsageDay {
  day: string;
  requests: number;
  status2xx: number;
  status3xx: number;
  status4xx: number;
  status5xx: number;
  rateLimited: number;
}

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag: string, attributes: Record<string, string | number>, ...children: Array<Node | string>): SVGElement {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child);
  return element;
}

/** The bands of a day's bar, bottom up: 429s apart from the other 4xx so that a limit reached shows. */
const BANDS = [
  { name: '2xx', className: 'band-2xx', count: (day: UsageDay) => day.status2xx },
  { name: '3xx', className: 'band-3xx', count: (day: UsageDay) => day.status3xx },
  { name: '4xx (not 429)', className: 'band-4xx', count: (day: UsageDay) => Math.max(0, day.status4xx - day.rateLimited) },
  { name: '429 rate limited', className: 'band-429', count: (day: UsageDay) => day.rateLimited },
  { name: '5xx', className: 'band-5xx', count: (day: UsageDay) => day.status5xx },
] as const;

/** `days` days ending today (UTC), oldest first, each the API's count or none. */
function span(usage: readonly UsageDay[], days: number): UsageDay[] {
  const byDay = new Map(usage.map((day) => [day.day, day]));
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  return Array.from({ length: days }, (_, index) => {
    const day = new Date(today - (days - 1 - index) * 86_400_000).toISOString().slice(0, 10);
    return byDay.get(day) ?? { day, requests: 0, status2xx: 0, status3xx: 0, status4xx: 0, status5xx: 0, rateLimited: 0 };
  });
}

/** Requests per day as stacked bars by status class, an inline SVG with a text summary and a legend. */
export function usageChart(usage: readonly UsageDay[], days: number): HTMLElement {
  const series = span(usage, days);
  const width = 720;
  const height = 160;
  const bar = width / days;
  const most = Math.max(1, ...series.map((day) => BANDS.reduce((sum, band) => sum + band.count(day), 0)));
  const total = series.reduce((sum, day) => sum + day.requests, 0);
  const limited = series.reduce((sum, day) => sum + day.rateLimited, 0);
  const summary = `${total} request${total === 1 ? '' : 's'} in the last ${days} days, ${limited} refused with 429 (rate limited); the busiest day had ${most === 1 && total === 0 ? 0 : most}.`;
  const bars = series.map((day, index) => {
    let y = height;
    const parts = BANDS.map((band) => {
      const size = (band.count(day) / most) * (height - 4);
      y -= size;
      return size > 0 ? svg('rect', { x: (index * bar + 1).toFixed(1), y: y.toFixed(1), width: (bar - 2).toFixed(1), height: size.toFixed(1), class: band.className }) : null;
    }).filter((part): part is SVGElement => part !== null);
    const detail = BANDS.map((band) => `${band.name}: ${band.count(day)}`).join(', ');
    return svg('g', {}, svg('title', {}, `${day.day}: ${day.requests} requests (${detail})`), svg('rect', { x: (index * bar).toFixed(1), y: 0, width: bar.toFixed(1), height, class: 'day' }), ...parts);
  });
  const picture = svg('svg', { viewBox: `0 0 ${width} ${height + 16}`, role: 'img', 'aria-label': summary, class: 'chart' },
    ...bars,
    svg('text', { x: 0, y: height + 14, class: 'axis' }, series[0]!.day),
    svg('text', { x: width, y: height + 14, class: 'axis end' }, series[series.length - 1]!.day),
  );
  return h('figure', { className: 'usage' },
    picture,
    h('figcaption', {}, summary, h('ul', { className: 'legend' }, BANDS.map((band) => h('li', {}, h('span', { className: `swatch ${band.className}`, 'aria-hidden': 'true' }), band.name)))),
  );
}
