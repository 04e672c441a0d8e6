/**
 * Analytics → one book: its figures with their change, views over time,
 * per-page attention (each page tinted by its average active time, its
 * reach as a bar, all of it in a table too), the readers, the leads and
 * the CSV exports of the range. Without the Company plan, only the leads
 * (on every plan, in UTC days: the summary naming the zone is not available).
 */
import { useRoute } from 'preact-iso/router';
import { useEffect } from 'preact/hooks';
import { account, call, client } from '../api.ts';
import { Page } from '../components/page.tsx';
import { PageAttention } from './attention.tsx';
import { Events } from './events.tsx';
import { ReadingFlow } from './flow.tsx';
import { Readers } from './journey.tsx';
import { Leads } from './leads.tsx';
import { rangeHref } from './range.ts';
import { Headline, Problems, TopList, callWhole, useQuery, useRange } from './widgets.tsx';

const EXPORTS = [
  ['analytics', 'Daily summary'], ['interaction-events', 'Interaction events'], ['audit-log', 'Audit log'], ['access-audit', 'Access audit'],
  ['leads', 'Leads'], ['page-performance', 'Page performance'], ['reader-pages', 'Reader pages'], ['readers', 'Readers'],
] as const;

/**
 * The workspace's analytics zone as last answered, kept in this browser (per workspace): the sections start with
 * it at once, beside the summary, instead of after GET /analytics/settings. The answer wins: if the setting
 * changed meanwhile, the sections read again in the zone answered.
 */
const zoneKey = () => `flipbook.analytics-zone.${account.value?.active_workspace?.id ?? ''}`;
function rememberedZone(): string | undefined {
  try {
    return localStorage.getItem(zoneKey()) ?? undefined;
  } catch {
    return undefined;
  }
}

export default function BookAnalytics() {
  const { params } = useRoute();
  const bookId = params.id!;
  const [state, setState] = useRange();
  // With `&link=` in the address, every figure and section is of the visits through that tracked link.
  const link = state.link;
  const bookWide = { date: state.date, exclude_team: state.excludeTeam, book_id: bookId };
  const query = link !== undefined ? { ...bookWide, tracked_link_id: link } : bookWide;
  const key = JSON.stringify(query);
  const book = useQuery(`book${bookId}`, () => callWhole(client.GET('/v1/books/{book}', { params: { path: { book: bookId } } })));
  const summary = useQuery(`s${key}`, () => callWhole(client.GET('/v1/analytics/summary', { params: { query } })));
  const series = useQuery(`v${key}`, () => callWhole(client.GET('/v1/analytics/views-over-time', { params: { query } })));
  // Every link of the book side by side, whichever one the screen is narrowed to.
  const links = useQuery(`l${JSON.stringify(bookWide)}`, () => callWhole(client.GET('/v1/analytics/top-tracked-links', { params: { query: { ...bookWide, limit: 100 } } })));
  // The workspace's zone from the settings (one row, every plan) rather than from the summary: the sections
  // start at once instead of after the summary's scan of the range (bench:analytics-screens, docs/analytics-screens.md).
  const settings = useQuery('analytics-settings', () => call(client.GET('/v1/analytics/settings')));
  const linkRow = link !== undefined ? links.data?.data.find((l) => l.tracked_link_id === link) : undefined;
  const linkName = link === undefined ? null : linkRow ? `${linkRow.name} (/${linkRow.slug})` : `tracked link ${link}`;
  const bookTitle = book.data ? `Analytics: ${book.data.data.name}` : 'Book analytics';
  const title = linkName ? `${bookTitle}, through ${linkName}` : bookTitle;
  const planned = summary.problem?.type === 'PlanRestrictionException';
  const visits = summary.data?.data.unique_readers ?? 0;
  // The book operations default to UTC days (as documented for API clients); the screen asks for the
  // workspace's zone, which the summary names, so every section counts the same days as the figures.
  const answeredZone = summary.data?.meta.time_zone ?? settings.data?.time_zone;
  useEffect(() => {
    try {
      if (answeredZone) localStorage.setItem(zoneKey(), answeredZone);
    } catch {
      // Storage refused (private mode, quota): the next visit asks the settings again.
    }
  }, [answeredZone]);
  const timeZone = answeredZone ?? rememberedZone();
  const bookQuery = timeZone ? { ...query, tz: timeZone } : null;
  // The events and leads, far below, wait while the figures and the series read (useWhenNear).
  const topReading = summary.loading || series.loading;
  const exportsLabel = link !== undefined ? 'through this tracked link' : 'of this book';
  const exportQuery = new URLSearchParams({
    date: state.date, ...(timeZone ? { tz: timeZone } : {}), ...(state.excludeTeam ? { exclude_team: 'true' } : {}), ...(link !== undefined ? { tracked_link_id: String(link) } : {}),
  }).toString();
  return (
    <Page title={title}>
      <p>
        <a href={rangeHref('/app/analytics', { ...state, link: undefined, events: undefined })}>All analytics</a>
        {link !== undefined && <> · <a href={rangeHref(`/app/analytics/books/${bookId}`, { ...state, link: undefined })}>All visits of this book</a></>}
      </p>
      {linkName && <p data-tracked-link>Every figure and section below counts only the visits, clicks and leads that came through the tracked link {linkName}.</p>}
      <Problems problem={book.problem} what="book" />
      {planned ? (
        <>
          <Problems problem={summary.problem} what="figures" />
          <Leads query={{ ...query, tz: 'UTC' }} />
        </>
      ) : (
        <>
          <Headline state={state} onChange={setState} bookId={bookId} summary={summary} series={series} />

          <Problems problem={links.problem} what="tracked links" />
          {links.data && (
            <TopList
              title="Tracked links side by side"
              loading={links.loading}
              empty="No visit came through a tracked link of this book in this range."
              rows={links.data.data.map((l) => ({
                ...l,
                key: String(l.tracked_link_id),
                name: l.tracked_link_id === link
                  ? <>{l.name} (/{l.slug}) <span class="badge">shown</span></>
                  : <a href={rangeHref(`/app/analytics/books/${bookId}`, { ...state, link: l.tracked_link_id })}>{l.name} (/{l.slug})</a>,
              }))}
            />
          )}
          {bookQuery && !summary.problem && (
            <>
              <PageAttention query={bookQuery} visits={visits} />
              <ReadingFlow query={bookQuery} />
              <Readers query={bookQuery} />
              <Events query={bookQuery} filter={state.events} onFilter={(events) => setState({ ...state, events }, true)} hold={topReading} />
              <Leads query={bookQuery} hold={topReading} />
            </>
          )}

          <section class="card" aria-labelledby="exports">
            <h2 id="exports">Exports</h2>
            <p>CSV files of the visits {exportsLabel} for the range and the team switch above.</p>
            <ul class="analytics-exports">
              {EXPORTS.map(([path, label]) => (
                <li key={path}>
                  <a href={path === 'analytics' ? `/v1/exports/analytics/${bookId}?${exportQuery}` : `/v1/exports/books/${bookId}/${path}?${exportQuery}`} download>{label} (CSV)</a>
                </li>
              ))}
            </ul>
          </section>
        </>
      )}
    </Page>
  );
}
