/**
 * Every cursor list answers `{ data: [...], meta: { next_cursor, has_more } }`
 * and takes `cursor` (and `limit`) in its query: `paginate` follows
 * `next_cursor` until it is null, yielding one item at a time.
 *
 *   for await (const book of paginate(client, '/v1/books', { query: { 'filter[status]': 'publish' } })) …
 *
 * The paths it accepts, their parameters and the items' type all come from
 * the generated schema: a list that paginates otherwise is refused when type
 * checking.
 */
import type { Client } from 'openapi-fetch';
import { unwrap } from './errors.ts';
import type { paths } from './schema.d.ts';

type JsonOf<Op> = Op extends { responses: { 200: { content: { 'application/json': infer Body } } } } ? Body : never;
type GetOf<P extends keyof paths> = paths[P] extends { get: infer Op } ? Op : never;
type QueryOf<P extends keyof paths> = GetOf<P> extends { parameters: { query?: infer Q } } ? Q : never;

interface CursorPage {
  data: unknown[];
  meta: { next_cursor: string | null };
}

/** The paths whose GET is a cursor list. */
export type CursorListPath = {
  [P in keyof paths]: JsonOf<GetOf<P>> extends CursorPage ? ('cursor' extends keyof NonNullable<QueryOf<P>> ? P : never) : never;
}[keyof paths];

/** What one list yields. */
export type ListItem<P extends CursorListPath> = JsonOf<GetOf<P>> extends { data: (infer Item)[] } ? Item : never;

type Parameters_<P extends CursorListPath> = GetOf<P> extends { parameters: infer Params } ? Params : never;
type ListQuery<P extends CursorListPath> = Omit<NonNullable<QueryOf<P>>, 'cursor'>;

/** The list's parameters (path, query), without `cursor`, which paginate sets itself. */
export type ListParams<P extends CursorListPath> = Omit<Parameters_<P>, 'query' | 'header' | 'cookie'> &
  (object extends Pick<Parameters_<P>, 'query' & keyof Parameters_<P>> ? { query?: ListQuery<P> } : { query: ListQuery<P> });

type ParamsArgument<P extends CursorListPath> = object extends ListParams<P> ? [params?: ListParams<P>] : [params: ListParams<P>];

export interface PaginateOptions {
  signal?: AbortSignal;
}

/** Every item of a cursor list, page after page; throws a FlipbookApiError when a page fails. */
export async function* paginate<P extends CursorListPath>(
  client: Client<paths>,
  path: P,
  ...args: [...ParamsArgument<P>, options?: PaginateOptions]
): AsyncGenerator<ListItem<P>, void, undefined> {
  const [params, options] = args as unknown as [ListParams<P> | undefined, PaginateOptions | undefined];
  const get = client.GET as unknown as (path: string, init: { params: object; signal?: AbortSignal }) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  const given = (params ?? {}) as { query?: Record<string, unknown> };
  let cursor: string | undefined;
  do {
    const page = (await unwrap(get(path, { params: { ...given, query: { ...given.query, cursor } }, signal: options?.signal }))) as CursorPage;
    for (const item of page.data) yield item as ListItem<P>;
    cursor = page.meta.next_cursor ?? undefined;
  } while (cursor);
}
