/**
 * The analytics date range and the team switch, kept in the address
 * (`?range=30d&team=exclude`, a custom range `?range=2026-03-01,2026-03-31`)
 * so a view can be shared and reloaded as it was; on a book's screen the
 * events' filters too (`&events=audit&event_type=access_rejected`,
 * `&event_type=link_clicked&event_page=3`). Ranges are the API's own
 * `date` forms: the days are the workspace's time zone's, on the server.
 */
export const PRESETS = [
  { value: 'today', label: 'Today' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
  { value: '12mo', label: 'Last 12 months' },
  { value: 'all', label: 'All time' },
] as const;

export const DEFAULT_RANGE = '30d';
const CUSTOM = /^(\d{4}-\d{2}-\d{2}),(\d{4}-\d{2}-\d{2})$/;

/** The API's event types the events section filters by: interaction events, and the audit log. */
export const INTERACTION_TYPES = ['session_started', 'page_segment_completed', 'link_clicked', 'document_downloaded', 'lead_form_submitted', 'form_widget_opened', 'checkout_widget_opened', 'checkout_redirect_clicked', 'session_ended'] as const;
export const AUDIT_TYPES = ['access_requested', 'access_granted', 'access_rejected', 'document_downloaded', 'link_clicked', 'lead_form_submitted', 'form_widget_opened', 'checkout_widget_opened', 'checkout_redirect_clicked'] as const;

/** The events section's filters: which list, an event type of that list, and (interaction events only) a page. */
export interface EventsFilter {
  kind: 'interaction' | 'audit';
  type?: string | undefined;
  page?: number | undefined;
}

export interface RangeState {
  /** The API's `date`. */
  date: string;
  excludeTeam: boolean;
  /** A book's screen narrowed to one tracked link (`&link=12`): the API's `tracked_link_id`. */
  link?: number | undefined;
  /** A book's events filters (`&events=audit&event_type=…&event_page=…`); absent: interaction events, every type and page. */
  events?: EventsFilter | undefined;
}

/** The events filters of an address: anything the section could not show (an audit type on interaction events, page 0) is ignored. */
export function readEvents(query: Record<string, string | undefined>): EventsFilter | undefined {
  const kind = query.events === 'audit' ? 'audit' : 'interaction';
  const types: readonly string[] = kind === 'audit' ? AUDIT_TYPES : INTERACTION_TYPES;
  const type = query.event_type !== undefined && types.includes(query.event_type) ? query.event_type : undefined;
  const page = kind === 'interaction' && /^[1-9]\d{0,5}$/.test(query.event_page ?? '') ? Number(query.event_page) : undefined;
  if (kind === 'interaction' && type === undefined && page === undefined) return undefined;
  return { kind, ...(type !== undefined ? { type } : {}), ...(page !== undefined ? { page } : {}) };
}

export function readRange(query: Record<string, string | undefined>): RangeState {
  const raw = query.range ?? DEFAULT_RANGE;
  const date = PRESETS.some((p) => p.value === raw) || CUSTOM.test(raw) ? raw : DEFAULT_RANGE;
  const link = /^[1-9]\d{0,9}$/.test(query.link ?? '') ? Number(query.link) : undefined;
  const events = readEvents(query);
  return { date, excludeTeam: query.team === 'exclude', ...(link !== undefined && link <= 2_147_483_647 ? { link } : {}), ...(events ? { events } : {}) };
}

/** The address of `path` with the state in its query. */
export function rangeHref(path: string, state: RangeState): string {
  const params = new URLSearchParams({ range: state.date });
  if (state.excludeTeam) params.set('team', 'exclude');
  if (state.link !== undefined) params.set('link', String(state.link));
  const events = state.events;
  if (events?.kind === 'audit') params.set('events', 'audit');
  if (events?.type) params.set('event_type', events.type);
  if (events?.kind === 'interaction' && events.page !== undefined) params.set('event_page', String(events.page));
  return `${path}?${params.toString()}`;
}

export function customDays(date: string): [string, string] | null {
  const match = CUSTOM.exec(date);
  return match ? [match[1]!, match[2]!] : null;
}

export function rangeLabel(date: string): string {
  const preset = PRESETS.find((p) => p.value === date);
  if (preset) return preset.label.toLowerCase();
  const days = customDays(date);
  return days ? `${days[0]} to ${days[1]}` : date;
}

/** "+25 %", "−10 %", "no change", or "new" when the previous period had none. */
export function change(current: number, previous: number): { text: string; direction: 'up' | 'down' | 'same' } {
  if (current === previous) return { text: 'no change', direction: 'same' };
  if (previous === 0) return { text: 'new', direction: 'up' };
  const pct = Math.round(((current - previous) / previous) * 100);
  return pct >= 0 ? { text: `up ${pct} %`, direction: 'up' } : { text: `down ${-pct} %`, direction: 'down' };
}

/** 3725 → "1 h 2 min", 75 → "1 min 15 s". */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min ${s % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Whole per cent of `readers` among `visits` (0 without visits). */
export function reachOf(readers: number, visits: number): number {
  return visits > 0 ? Math.round((readers / visits) * 100) : 0;
}

/** "Page 1 is reached by 100 %, the last page (4) by 33 %; the largest drop is after page 2 (67 % to 33 %)." */
export function dropOffSummary(rows: { page: number; reach: number }[]): string {
  if (rows.length === 0) return 'No page was read in this range.';
  const first = rows[0]!;
  const last = rows.at(-1)!;
  let drop: { after: number; from: number; to: number } | null = null;
  for (let i = 1; i < rows.length; i++) {
    const fall = rows[i - 1]!.reach - rows[i]!.reach;
    if (fall > 0 && (!drop || fall > drop.from - drop.to)) drop = { after: rows[i - 1]!.page, from: rows[i - 1]!.reach, to: rows[i]!.reach };
  }
  const ends = rows.length === 1 ? `Page ${first.page} is reached by ${first.reach} %` : `Page ${first.page} is reached by ${first.reach} %, the last page (${last.page}) by ${last.reach} %`;
  return drop ? `${ends}; the largest drop is after page ${drop.after} (${drop.from} % to ${drop.to} %).` : `${ends}; no page loses readers to the next.`;
}

export interface FlowFigures {
  pages: { page_number: number; views: number; entries: number; exits: number }[];
  transitions: { from_page: number; to_page: number; count: number; readers: number }[];
}

function times(n: number): string {
  return n === 1 ? 'once' : `${n.toLocaleString('en')} times`;
}

/** The flow in words: how many visits, where most began and ended, the most common move. */
export function flowSummary(visits: number, flow: FlowFigures): string {
  if (visits === 0) return 'No visit in this range.';
  const most = (key: 'entries' | 'exits') => flow.pages.reduce<FlowFigures['pages'][number] | null>((best, p) => (p[key] > 0 && (!best || p[key] > best[key]) ? p : best), null);
  const entry = most('entries');
  const exit = most('exits');
  const move = flow.transitions[0];
  const parts = [`${visits.toLocaleString('en')} ${visits === 1 ? 'visit' : 'visits'}`];
  if (entry) parts.push(`most began on page ${entry.page_number} (${entry.entries})`);
  if (exit) parts.push(`most left from page ${exit.page_number} (${exit.exits})`);
  parts.push(move ? `the most common move is page ${move.from_page} to page ${move.to_page} (${times(move.count)}, by ${move.readers} ${move.readers === 1 ? 'reader' : 'readers'})` : 'no reader moved between pages');
  return `${parts.join('; ')}.`;
}

/** "link_clicked" → "Link clicked". */
export function eventLabel(type: string): string {
  const words = type.replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
