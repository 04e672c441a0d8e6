/** Request and response shapes of the Subscribers and Embed domains operations (spec part 4). */
import { Type } from 'typebox';
import { DateTime } from '../../platform/http/schemas.ts';

const EntryType = Type.Union([Type.Literal('email'), Type.Literal('domain')]);

export const Subscriber = Type.Object(
  {
    id: Type.Integer(),
    book_id: Type.String({ description: "The book's random_id." }),
    type: Type.Union([Type.Literal('email'), Type.Literal('domain')], { description: '`email`: one address; `domain`: every address at that domain or its subdomains.' }),
    email: Type.String({ description: 'The address, lower-cased; for a `domain` entry, the domain (example.com).' }),
    created_at: DateTime,
  },
  { $id: 'Subscriber', title: 'Subscriber (access-list entry)' },
);

export const exampleSubscriber = { id: 42, book_id: 'q0bS0fGx2t9M1cFqR7xN2A', type: 'email', email: 'ann@example.com', created_at: '2026-03-01T09:30:00.000Z' };

export const EodMeta = Type.Object({ eod_enabled: Type.Boolean({ description: "The book's settings.eod_enabled after the change." }) });
export const DomainsMeta = Type.Object({ domains_enabled: Type.Boolean({ description: "The book's settings.domains_enabled after the change." }) });

export const ListSubscribersQuery = Type.Object({
  'pagination[per_page]': Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Page size, 1-200; default 25.' })),
  'pagination[rowsPerPage]': Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Alias of pagination[per_page]; per_page wins when both are sent.' })),
  'pagination[page]': Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, from 1.' })),
  filter: Type.Optional(Type.String({ maxLength: 255, description: "Entries whose address or domain contains this text, or every entry of the book whose random_id it is." })),
  type: Type.Optional(EntryType),
});

export const PageMeta = Type.Object({
  current_page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
  last_page: Type.Integer(),
});

export const AddSubscriberBody = Type.Object({
  book_id: Type.String({ minLength: 1, maxLength: 64, description: "The book's random_id. The numeric key is refused (422)." }),
  email: Type.String({ minLength: 1, maxLength: 255, description: 'An address; for `type: domain`, a domain ("example.com", "@example.com") or an address whose domain is meant.' }),
  type: Type.Optional(Type.Union([Type.Literal('email'), Type.Literal('domain')], { description: 'Default: `email` when the value has a local part (ann@…), else `domain`.' })),
}, { additionalProperties: false });

export const SubscriberParams = Type.Object({ subscriber: Type.Integer({ minimum: 1, maximum: 2147483647 }) });

export const EmbedDomain = Type.Object(
  {
    id: Type.String(),
    domain: Type.String({ description: 'A host, lower-cased (punycode for international names).' }),
    includes_subdomains: Type.Boolean({ description: 'Always true: a listed host also admits its subdomains.' }),
    created_at: DateTime,
  },
  { $id: 'EmbedDomain', title: 'Embed domain' },
);

export const exampleEmbedDomain = { id: '7', domain: 'shop.example.com', includes_subdomains: true, created_at: '2026-03-01T09:30:00.000Z' };

export const AddEmbedDomainBody = Type.Object({
  domain: Type.String({ minLength: 1, maxLength: 255, description: 'A bare host (shop.example.com) or a pasted URL, reduced to its host. IP addresses are refused.' }),
}, { additionalProperties: false });

export const EmbedDomainParams = Type.Object({
  book: Type.String({ minLength: 1, maxLength: 64 }),
  embedDomain: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});

export const Deleted = Type.Object({ deleted: Type.Literal(true, { description: 'The entry was removed; the rest is what it was.' }) });

export const IMPORT_MAX_ENTRIES = 1000;

export const ImportSubscribersBody = Type.Object({
  book_id: Type.String({ minLength: 1, maxLength: 64, description: "The book's random_id." }),
  entries: Type.Array(
    Type.Object({
      email: Type.String({ maxLength: 255, description: 'An address or a domain, as in POST /subscribers.' }),
      type: Type.Optional(EntryType),
    }, { additionalProperties: false }),
    { minItems: 1, maxItems: IMPORT_MAX_ENTRIES, description: `1-${IMPORT_MAX_ENTRIES} entries; send a longer list in several requests.` },
  ),
  dry_run: Type.Optional(Type.Boolean({ description: 'Judge every row and write nothing (a preview). Default false.' })),
}, { additionalProperties: false });

const ImportRow = Type.Object({
  row: Type.Integer({ description: '1-based position in `entries`.' }),
  input: Type.String({ description: 'The value as sent.' }),
  outcome: Type.Union([Type.Literal('added'), Type.Literal('listed'), Type.Literal('repeated'), Type.Literal('invalid')], {
    description: '`added` (or would be, in a dry run); `listed`: already on the list; `repeated`: an earlier row has it; `invalid`: not an address or a domain.',
  }),
  type: Type.Optional(EntryType),
  email: Type.Optional(Type.String({ description: 'The entry as stored (lower-cased, punycode).' })),
  id: Type.Optional(Type.Integer({ description: "The entry's id once it is on the list." })),
  message: Type.Optional(Type.String({ description: 'Why the row was not added, in words.' })),
});

export const ImportResult = Type.Object({
  data: Type.Array(ImportRow),
  meta: Type.Object({
    added: Type.Integer(),
    listed: Type.Integer(),
    repeated: Type.Integer(),
    invalid: Type.Integer(),
    dry_run: Type.Boolean(),
    eod_enabled: Type.Boolean({ description: "The book's settings.eod_enabled afterwards (unchanged by a dry run)." }),
  }),
}, {
  examples: [{
    data: [
      { row: 1, input: 'Ann@Example.com', outcome: 'added', type: 'email', email: 'ann@example.com', id: 43 },
      { row: 2, input: 'not an address', outcome: 'invalid', message: '"not an address" is not a valid domain (for example example.com).' },
    ],
    meta: { added: 1, listed: 0, repeated: 0, invalid: 1, dry_run: false, eod_enabled: true },
  }],
});

export const ClearSubscribersBody = Type.Object({
  book_id: Type.String({ minLength: 1, maxLength: 64, description: "The book's random_id." }),
}, { additionalProperties: false });
