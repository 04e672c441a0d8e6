/** Request and response shapes of the tracked-link operations (beyond the spec's listed operations; issue 5). */
import { Type } from 'typebox';
import { DateTime, cursorQuery } from '../../platform/http/schemas.ts';

export const TRACKED_LINK_SLUG = '^[a-z0-9-]{1,64}$';

export const TrackedLink = Type.Object(
  {
    id: Type.Integer(),
    book_id: Type.String({ description: "The book's random_id." }),
    name: Type.String(),
    slug: Type.String({ description: 'Lower-case letters, digits and dashes; unique within the book.' }),
    url: Type.String({ description: 'The shareable reader address: the book\'s preview_url with `?tl=<slug>`. Visits through it carry tracked_link_id.' }),
    visits: Type.Integer({ description: 'Reader visits (view events) that arrived through this link.' }),
    created_at: DateTime,
  },
  { $id: 'TrackedLink', title: 'Tracked link' },
);

export const exampleTrackedLink = {
  id: 12,
  book_id: 'q0bS0fGx2t9M1cFqR7xN2A',
  name: 'March newsletter',
  slug: 'march-newsletter',
  url: 'https://flipbooks.example.com/read/q0bS0fGx2t9M1cFqR7xN2A?tl=march-newsletter',
  visits: 318,
  created_at: '2026-03-01T09:30:00.000Z',
};

export const ListTrackedLinksQuery = Type.Object(cursorQuery(200, 25));

export const CreateTrackedLinkBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, description: 'What the link is for ("March newsletter").' }),
  slug: Type.Optional(Type.String({
    pattern: TRACKED_LINK_SLUG,
    description: 'The `tl` value of the URL: 1-64 of a-z, 0-9 and "-". Default: made from the name. A slug the book already uses is a 422.',
  })),
}, { additionalProperties: false });

export const TrackedLinkParams = Type.Object({
  book: Type.String({ minLength: 1, maxLength: 64, description: "The book's random_id." }),
  trackedLink: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});
