/**
 * The eight CSV exports of spec part 4 (scope exports:read). All but leads
 * need the Company plan; the leads export is on every plan, because leads are
 * the customer's own captured data (a lead form works on every plan).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type, type TProperties, type TSchema } from 'typebox';
import { authOf } from '../../platform/http/route-config.ts';
import { BookParams } from '../books/books.schemas.ts';
import { ANALYTICS_ERRORS } from './analytics.routes.ts';
import { acrossVersions, filters } from './analytics.schemas.ts';
import { AUDIT_EVENT_TYPES } from './audit.ts';
import { csvStream, type CsvExport } from './csv.ts';
import { EXPORT_COLUMNS, type ExportsService } from './exports.service.ts';
import { INTERACTION_EVENT_TYPES } from './reader-events.schemas.ts';

const { date, tz, viewer_id, tracked_link_id, session_id, page_number, exclude_team, version } = filters;
const bom = Type.Optional(Type.Boolean({ default: true, description: 'Start the file with a UTF-8 byte-order mark (default true: Excel then reads non-ASCII text correctly). `false` drops it.' }));
const query = <T extends TProperties>(properties: T) => Type.Object({ ...properties, exclude_team, version, bom }, { additionalProperties: false });

const CSV_RESPONSE = {
  503: ANALYTICS_ERRORS[503],
  200: {
    description: 'The CSV file (streamed).',
    content: { 'text/csv': { schema: { type: 'string' } } },
  },
};

const COMMON =
  ' The file: `text/csv; charset=utf-8`, `Content-Disposition: attachment`, UTF-8 with a byte-order mark (unless `bom=false`), CRLF line ends, RFC 4180 quoting, ' +
  'ISO 8601 UTC timestamps, a header row. Text cells that readers or customers typed (emails, names, hosts, form fields, metadata) starting with `=`, `+`, `-`, `@`, ' +
  'a tab or a carriage return are prefixed with `\'` (spreadsheet formula injection). An empty text is an empty cell. Streamed from the database; an unknown book (or one of another workspace) is 404.';

const METADATA =
  ' `metadata` is JSON as PostgreSQL writes jsonb (keys in jsonb\'s order, a space after `:` and `,`: `{"a": [1, 2]}`), the same on both databases; ' +
  'a JSON string is written unquoted, a JSON null as an empty cell.';

const columns = (kind: keyof typeof EXPORT_COLUMNS) => ` Columns: ${EXPORT_COLUMNS[kind].map((c) => `\`${c}\``).join(', ')}.`;

function send(reply: FastifyReply, csv: CsvExport, withBom: boolean | undefined) {
  reply.header('content-type', 'text/csv; charset=utf-8');
  reply.header('content-disposition', `attachment; filename="${csv.filename}"`);
  reply.header('cache-control', 'no-store');
  const stream = csvStream(csv, { bom: withBom ?? true });
  // A client gone while a COPY was starting: stop the statement now.
  if (reply.raw.destroyed) stream.destroy();
  return reply.send(stream);
}

export const exportsRoutes: FastifyPluginAsyncTypebox<{ exports: ExportsService }> = async (app, { exports }) => {
  const company = { scope: 'exports:read' as const, feature: 'exports' as const };
  const tags = ['Exports'];
  const schema = <Q extends TSchema>(operationId: string, summary: string, description: string, querystring: Q) => ({
    operationId, tags, summary, description: description + COMMON, params: BookParams, querystring, response: CSV_RESPONSE,
  });

  app.get('/exports/analytics/:book', {
    schema: schema('exportAnalyticsSummary', 'Analytics summary (CSV)',
      'One row per calendar day (in `tz`) with visits: visits, impressions, reads, clicks, readers (identified readers plus anonymous visits), identified readers, ' +
      'pages viewed, active seconds and the average engagement score of the visits.' + columns('analytics'),
      query({ date, tz, tracked_link_id, viewer_id })),
    config: company,
  }, async (request, reply) => send(reply, await exports.analyticsSummary(authOf(request), { ...request.query, book_id: request.params.book }), request.query.bom));

  app.get('/exports/books/:book/access-audit', {
    schema: schema('exportAccessAudit', 'Access audit (CSV)',
      "The access gate's decisions (`access_requested`, `access_granted`, `access_rejected`) from the audit log, oldest first." + METADATA + columns('audit'),
      query({ date, tz, viewer_id, tracked_link_id })),
    config: company,
  }, async (request, reply) => send(reply, await exports.auditLog(authOf(request), { ...request.query, book_id: request.params.book }, { accessOnly: true }), request.query.bom));

  app.get('/exports/books/:book/audit-log', {
    schema: schema('exportAuditLog', 'Audit log (CSV)', 'The audit log of GET /analytics/audit-log with the same filters, oldest first.' + METADATA + columns('audit'),
      query({ date, tz, viewer_id, tracked_link_id, event_type: Type.Optional(Type.Union(AUDIT_EVENT_TYPES.map((t) => Type.Literal(t)))) })),
    config: company,
  }, async (request, reply) => send(reply, await exports.auditLog(authOf(request), { ...request.query, book_id: request.params.book }), request.query.bom));

  app.get('/exports/books/:book/interaction-events', {
    schema: schema('exportInteractionEvents', 'Interaction events (CSV)',
      'The events of GET /analytics/interaction-events with the same filters, oldest first.' + METADATA + columns('interactions'),
      query({ date, tz, viewer_id, tracked_link_id, session_id, page_number, event_type: Type.Optional(Type.Union(INTERACTION_EVENT_TYPES.map((t) => Type.Literal(t)))) })),
    config: company,
  }, async (request, reply) => send(reply, await exports.interactionEvents(authOf(request), { ...request.query, book_id: request.params.book }), request.query.bom));

  app.get('/exports/books/:book/leads', {
    schema: schema('exportLeads', 'Captured leads (CSV)',
      "Lead form submissions, oldest first; `date` selects by submission time. On every plan (the spec states none): the leads are the customer's own captured data. " +
      'Fields the form did not ask for are empty.' + columns('leads'),
      query({ date, tz, tracked_link_id, session_id })),
    config: { scope: 'exports:read' },
  }, async (request, reply) => send(reply, await exports.leads(authOf(request), { ...request.query, book_id: request.params.book }), request.query.bom));

  app.get('/exports/books/:book/page-performance', {
    schema: schema('exportPagePerformance', 'Page performance (CSV)', 'The page summaries of GET /analytics/page-performance with the same filters, one row per page.' + columns('pages'),
      query({ date, tz, tracked_link_id, across_versions: acrossVersions })),
    config: company,
  }, async (request, reply) => send(reply, await exports.pagePerformance(authOf(request), { ...request.query, book_id: request.params.book }), request.query.bom));

  app.get('/exports/books/:book/reader-pages', {
    schema: schema('exportReaderPages', 'Reader pages (CSV)', 'The rows of GET /analytics/reader-pages with the same filters, by viewer then page.' + columns('readerPages'),
      query({ date, tz, viewer_id, session_id, tracked_link_id, page_number })),
    config: company,
  }, async (request, reply) => send(reply, await exports.readerPages(authOf(request), { ...request.query, book_id: request.params.book }), request.query.bom));

  app.get('/exports/books/:book/readers', {
    schema: schema('exportReaders', 'Readers (CSV)', 'The reader summaries of GET /analytics/readers with the same filters, latest visit first.' + columns('readers'),
      query({
        date, tz, viewer_id, session_id, tracked_link_id,
        include_anonymous: Type.Optional(Type.Boolean({ default: false, description: 'Also list each anonymous visit (default false).' })),
      })),
    config: company,
  }, async (request, reply) => send(reply, await exports.readers(authOf(request), { ...request.query, book_id: request.params.book }), request.query.bom));
};
