/** Access lists (spec part 4 "Subscribers") and embed domains ("Embed domains"). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authOf } from '../../platform/http/route-config.ts';
import { BookParams } from '../books/books.schemas.ts';
import type { AccessListsService } from './access-lists.service.ts';
import {
  AddEmbedDomainBody, AddSubscriberBody, ClearSubscribersBody, Deleted, ImportResult, ImportSubscribersBody, DomainsMeta, EmbedDomain, EmbedDomainParams, EodMeta, ListSubscribersQuery, PageMeta,
  Subscriber, SubscriberParams, exampleEmbedDomain, exampleSubscriber,
} from './access.schemas.ts';

const SubscriberRef = Type.Ref('Subscriber');
const EmbedDomainRef = Type.Ref('EmbedDomain');

export const accessRoutes: FastifyPluginAsyncTypebox<{ access: AccessListsService }> = async (app, { access }) => {
  app.addSchema(Subscriber);
  app.addSchema(EmbedDomain);

  app.get('/subscribers', {
    schema: {
      operationId: 'listSubscribers', tags: ['Subscribers'], summary: "List the workspace's access-list entries",
      description: 'Oldest first, page by page (`pagination[page]`, `pagination[per_page]`); `meta` has the totals.',
      querystring: ListSubscribersQuery,
      response: { 200: Type.Object({ data: Type.Array(SubscriberRef), meta: PageMeta }, { examples: [{ data: [exampleSubscriber], meta: { current_page: 1, per_page: 25, total: 1, last_page: 1 } }] }) },
    },
    config: { scope: 'subscribers:read' },
  }, async (request) => {
    const q = request.query;
    return access.listSubscribers(authOf(request), {
      page: q['pagination[page]'] ?? 1,
      perPage: q['pagination[per_page]'] ?? q['pagination[rowsPerPage]'] ?? 25,
      filter: q.filter || undefined,
      type: q.type,
    });
  });

  app.post('/subscribers', {
    schema: {
      operationId: 'addSubscriber', tags: ['Subscribers'], summary: "Add an address or a domain to a book's access list",
      description:
        'The first entry puts the list in force (`settings.eod_enabled` becomes true): readers must then sign in with a link sent to a listed address. ' +
        'Answers 201 with the new entry, or 200 with the existing one when it is already listed. `meta.eod_enabled` is the book\'s flag afterwards. Fires `subscriber.added`.',
      body: AddSubscriberBody,
      response: {
        200: Type.Object({ data: SubscriberRef, meta: EodMeta }),
        201: Type.Object({ data: SubscriberRef, meta: EodMeta }, { examples: [{ data: exampleSubscriber, meta: { eod_enabled: true } }] }),
      },
    },
    config: { scope: 'subscribers:write' },
  }, async (request, reply) => {
    const result = await access.addSubscriber(authOf(request), request.body);
    reply.code(result.created ? 201 : 200);
    return { data: result.record, meta: { eod_enabled: result.flags.eod_enabled } };
  });

  app.post('/subscribers/import', {
    schema: {
      operationId: 'importSubscribers', tags: ['Subscribers'], summary: "Add many addresses and domains to a book's access list",
      description:
        'For a pasted list or a CSV file. Each row is judged apart and answered in `data`, in order: rows that are not an address or a domain, or repeat an earlier row, ' +
        'are reported with a `message` and skipped; the others are added in one transaction (entries already listed are answered as `listed`). ' +
        'With `dry_run: true` nothing is written (a preview). Fires `subscriber.added` for each entry added. At most 1,000 entries a request.',
      body: ImportSubscribersBody,
      response: { 200: ImportResult },
    },
    config: { scope: 'subscribers:write' },
  }, async (request) => {
    const result = await access.importSubscribers(authOf(request), request.body);
    return { data: result.rows, meta: { ...result.counts, dry_run: request.body.dry_run ?? false, eod_enabled: result.eod_enabled } };
  });

  app.post('/subscribers/clear', {
    schema: {
      operationId: 'clearSubscribers', tags: ['Subscribers'], summary: "Remove every entry of a book's access list",
      description: 'Lifts the list (`settings.eod_enabled` becomes false): anyone with the link may read the book again, and readers signed in through the list keep reading without signing in.',
      body: ClearSubscribersBody,
      response: { 200: Type.Object({ data: Type.Object({ removed: Type.Integer({ description: 'How many entries were removed.' }) }), meta: EodMeta }, { examples: [{ data: { removed: 12 }, meta: { eod_enabled: false } }] }) },
    },
    config: { scope: 'subscribers:write' },
  }, async (request) => {
    const result = await access.clearSubscribers(authOf(request), request.body.book_id);
    return { data: { removed: result.removed }, meta: { eod_enabled: result.eod_enabled } };
  });

  app.delete('/subscribers/:subscriber', {
    schema: {
      operationId: 'removeSubscriber', tags: ['Subscribers'], summary: 'Remove an access-list entry',
      description: 'Removing the last entry of a book lifts its list (`settings.eod_enabled` becomes false). Readers signed in through this entry lose access at their next request.',
      params: SubscriberParams,
      response: { 200: Type.Object({ data: Type.Intersect([SubscriberRef, Deleted]), meta: EodMeta }) },
    },
    config: { scope: 'subscribers:write' },
  }, async (request) => {
    const result = await access.removeSubscriber(authOf(request), request.params.subscriber);
    return { data: { ...result.record, deleted: true as const }, meta: { eod_enabled: result.flags.eod_enabled } };
  });

  app.get('/books/:book/embed-domains', {
    schema: {
      operationId: 'listEmbedDomains', tags: ['Embed domains'], summary: 'Hosts allowed to embed a book',
      description: 'While the list has entries, only pages on these hosts (or their subdomains) may show the book in a frame.',
      params: BookParams,
      response: { 200: Type.Object({ data: Type.Array(EmbedDomainRef), meta: Type.Object({ total: Type.Integer(), domains_enabled: Type.Boolean() }) }, { examples: [{ data: [exampleEmbedDomain], meta: { total: 1, domains_enabled: true } }] }) },
    },
    config: { scope: 'books:read' },
  }, async (request) => access.listEmbedDomains(authOf(request), request.params.book));

  app.post('/books/:book/embed-domains', {
    schema: {
      operationId: 'addEmbedDomain', tags: ['Embed domains'], summary: 'Allow a host to embed a book',
      description: 'A pasted URL is reduced to its host. The first entry puts the list in force (`settings.domains_enabled` becomes true). Adding a listed host again answers it unchanged.',
      params: BookParams, body: AddEmbedDomainBody,
      response: { 200: Type.Object({ data: EmbedDomainRef, meta: DomainsMeta }, { examples: [{ data: exampleEmbedDomain, meta: { domains_enabled: true } }] }) },
    },
    config: { scope: 'books:write' },
  }, async (request) => {
    const result = await access.addEmbedDomain(authOf(request), request.params.book, request.body.domain);
    return { data: result.record, meta: { domains_enabled: result.flags.domains_enabled } };
  });

  app.delete('/books/:book/embed-domains/:embedDomain', {
    schema: {
      operationId: 'removeEmbedDomain', tags: ['Embed domains'], summary: 'Remove an embed domain',
      description: 'Removing the last host lifts the list (`settings.domains_enabled` becomes false): the book may be embedded anywhere again.',
      params: EmbedDomainParams,
      response: { 200: Type.Object({ data: Type.Intersect([EmbedDomainRef, Deleted]), meta: DomainsMeta }) },
    },
    config: { scope: 'books:write' },
  }, async (request) => {
    const result = await access.removeEmbedDomain(authOf(request), request.params.book, request.params.embedDomain);
    return { data: { ...result.record, deleted: true as const }, meta: { domains_enabled: result.flags.domains_enabled } };
  });
};
