/**
 * The access gate's public endpoints, beside the reader (not under /v1):
 *
 *   POST /read/:randomId/access          an address asks for a sign-in link (HTML form or JSON)
 *   GET  /read/:randomId/access/:token   the link from the e-mail: starts the reader session
 */
import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { ReaderBook, ReaderService } from '../reader/reader.service.ts';
import type { AccessListsService } from './access-lists.service.ts';
import { DEFAULT_GATE_MESSAGE, DEFAULT_REFUSAL_MESSAGE, type AccessGateService } from './access-gate.service.ts';
import { renderGatePage, type GatePageInput } from './gate.html.ts';
import { frameAncestorSources } from './reader-policy.ts';

const ROUTE = { schema: { hide: true }, config: { public: true, unlimited: true } } as const;
const FORM_LIMIT_BYTES = 4096;

export interface GateRoutesOptions {
  reader: ReaderService;
  lists: AccessListsService;
  gate: AccessGateService;
  linkTtlMinutes: number;
}

export const gateRoutes: FastifyPluginAsync<GateRoutesOptions> = async (app, { reader, lists, gate, linkTtlMinutes }) => {
  // The gate's form posts application/x-www-form-urlencoded (it works without script).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  async function findBook(randomId: string): Promise<ReaderBook | null> {
    const book = await reader.find(randomId);
    const availability = reader.availability(book);
    return availability === 'public' || availability === 'billing_expired' ? book : null;
  }

  async function page(reply: FastifyReply, status: number, book: ReaderBook | null, input: Omit<GatePageInput, 'nonce' | 'bookName'>) {
    const nonce = randomBytes(16).toString('base64');
    const hosts = book?.settings.domains_enabled ? await lists.embedHosts(book.row.id) : [];
    reply.removeHeader('x-frame-options');
    return reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', [
        "default-src 'none'", `style-src 'nonce-${nonce}'`, 'img-src data:', "form-action 'self'", "base-uri 'none'",
        `frame-ancestors ${hosts.length > 0 ? frameAncestorSources(hosts).join(' ') : '*'}`,
      ].join('; '))
      .header('cache-control', 'no-store')
      // The sign-in link carries its token in the path: never pass it on.
      .header('referrer-policy', 'no-referrer')
      .send(renderGatePage({ nonce, bookName: book?.row.name ?? 'Flipbook', ...input }));
  }

  const notFound = (reply: FastifyReply) =>
    page(reply, 404, null, { title: 'Flipbook not found', message: 'There is no flipbook at this address, or it is not published.' });

  app.post('/read/:randomId/access', ROUTE, async (request, reply) => {
    const { randomId } = request.params as { randomId: string };
    const book = await findBook(randomId);
    if (!book) return notFound(reply);
    const action = `/read/${randomId}/access`;
    if (!book.settings.eod_enabled) return reply.redirect(`/read/${randomId}`, 303);
    const gateMessage = book.settings.magic_link_message || DEFAULT_GATE_MESSAGE;
    const body = (request.body ?? {}) as { email?: unknown };
    const email = typeof body.email === 'string' ? body.email.slice(0, 320) : '';
    const result = await gate.requestLink(book, { email, ip: request.ip });
    switch (result.outcome) {
      case 'sent':
        return page(reply, 200, book, {
          title: 'Check your inbox',
          message: `We sent a link to ${result.email}. Open it on this device to read the flipbook; it works once and expires in ${linkTtlMinutes} minutes.`,
        });
      case 'refused':
        return page(reply, 403, book, { title: 'Sign in to read', message: gateMessage, error: book.settings.magic_link_error_message || DEFAULT_REFUSAL_MESSAGE, action, email: result.email });
      case 'invalid':
        return page(reply, 422, book, { title: 'Sign in to read', message: gateMessage, error: 'Enter a valid e-mail address.', action, email });
      case 'rate_limited':
        reply.header('retry-after', String(result.retryAfterSeconds));
        return page(reply, 429, book, { title: 'Too many attempts', message: gateMessage, error: `Too many requests for a link. Try again in ${Math.ceil(result.retryAfterSeconds / 60)} minutes.`, action, email });
    }
  });

  app.get('/read/:randomId/access/:token', ROUTE, async (request, reply) => {
    const { randomId, token } = request.params as { randomId: string; token: string };
    const book = await findBook(randomId);
    if (!book) return notFound(reply);
    const result = await gate.openLink(book, token);
    if (result.outcome === 'granted') {
      return reply.header('set-cookie', result.cookie).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(`/read/${randomId}`, 303);
    }
    const action = `/read/${randomId}/access`;
    const message = 'Enter your e-mail address to get a new link.';
    switch (result.outcome) {
      case 'expired':
        return page(reply, 410, book, { title: 'This link has expired', message, action });
      case 'used':
        return page(reply, 410, book, { title: 'This link was already used', message: `Each link opens the flipbook once. ${message}`, action });
      case 'not_listed':
        return page(reply, 403, book, { title: 'Access withdrawn', message: book.settings.magic_link_error_message || DEFAULT_REFUSAL_MESSAGE });
      default:
        return page(reply, 404, book, { title: 'This link is not valid', message, action });
    }
  });
};
