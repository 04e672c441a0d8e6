/** Tracked links of a book: shareable reader URLs whose visits are attributed to them (issue 5; the spec counts these operations without listing them). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authOf } from '../../platform/http/route-config.ts';
import { CursorMeta } from '../../platform/http/schemas.ts';
import { BookParams } from '../books/books.schemas.ts';
import type { TrackedLinksService } from './tracked-links.service.ts';
import { CreateTrackedLinkBody, ListTrackedLinksQuery, TrackedLink, TrackedLinkParams, exampleTrackedLink } from './tracked-links.schemas.ts';

const TrackedLinkRef = Type.Ref('TrackedLink');

export const trackedLinksRoutes: FastifyPluginAsyncTypebox<{ trackedLinks: TrackedLinksService }> = async (app, { trackedLinks }) => {
  app.addSchema(TrackedLink);

  app.get('/books/:book/tracked-links', {
    schema: {
      operationId: 'listTrackedLinks', tags: ['Tracked links'], summary: "A book's tracked links",
      description: 'Newest first, cursor-paginated, each with the number of visits it brought.',
      params: BookParams, querystring: ListTrackedLinksQuery,
      response: { 200: Type.Object({ data: Type.Array(TrackedLinkRef), meta: CursorMeta }, { examples: [{ data: [exampleTrackedLink], meta: { next_cursor: null, has_more: false } }] }) },
    },
    config: { scope: 'tracked-links:read' },
  }, async (request) => trackedLinks.list(authOf(request), request.params.book, { cursor: request.query.cursor, limit: request.query.limit ?? 25 }));

  app.post('/books/:book/tracked-links', {
    schema: {
      operationId: 'createTrackedLink', tags: ['Tracked links'], summary: 'Create a tracked link',
      description:
        'Answers 201 with the link; share its `url`. Without `slug`, one is made from the name (with a short suffix when the book already uses it). ' +
        'A `slug` the book already uses answers 422 on `slug`.',
      params: BookParams, body: CreateTrackedLinkBody,
      response: { 201: Type.Object({ data: TrackedLinkRef }, { examples: [{ data: { ...exampleTrackedLink, visits: 0 } }] }) },
    },
    config: { scope: 'tracked-links:write' },
  }, async (request, reply) => {
    const record = await trackedLinks.create(authOf(request), request.params.book, request.body);
    reply.code(201);
    return { data: record };
  });

  app.delete('/books/:book/tracked-links/:trackedLink', {
    schema: {
      operationId: 'deleteTrackedLink', tags: ['Tracked links'], summary: 'Delete a tracked link',
      description: 'Its URL keeps opening the book, but new visits are no longer attributed; past visits stay counted without `tracked_link_id`.',
      params: TrackedLinkParams,
      response: { 200: Type.Object({ data: Type.Intersect([TrackedLinkRef, Type.Object({ deleted: Type.Literal(true) })]) }) },
    },
    config: { scope: 'tracked-links:write' },
  }, async (request) => ({ data: { ...(await trackedLinks.delete(authOf(request), request.params.book, request.params.trackedLink)), deleted: true as const } }));
};
