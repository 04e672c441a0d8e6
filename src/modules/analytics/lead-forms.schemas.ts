/** Shapes of GET/PUT /v1/books/{book}/lead-form. */
import { Type } from 'typebox';
import { DateTime, Nullable } from '../../platform/http/schemas.ts';
import { LEAD_FORM_FIELDS } from './analytics.tables.ts';

const FieldName = Type.Union(LEAD_FORM_FIELDS.map((f) => Type.Literal(f)));
const Field = Type.Object({
  name: FieldName,
  required: Type.Boolean({ description: 'email is always required.' }),
}, { additionalProperties: false });

export const LeadForm = Type.Object(
  {
    book_id: Type.String({ description: "The book's random_id." }),
    enabled: Type.Boolean({ description: 'Whether the reader shows the form.' }),
    title: Type.String(),
    description: Nullable(Type.String()),
    fields: Type.Array(Field, { description: 'In the order shown; always includes email.' }),
    show_after_page: Type.Integer({ description: 'The form opens once the reader reaches this page (the last page for shorter books).' }),
    updated_at: Nullable(DateTime),
  },
  { $id: 'LeadForm', title: 'Lead form' },
);

export const exampleLeadForm = {
  book_id: 'q0bS0fGx2t9M1cFqR7xN2A',
  enabled: true,
  title: 'Get the full price list',
  description: 'Leave your address and we will send it today.',
  fields: [{ name: 'name', required: true }, { name: 'email', required: true }, { name: 'company', required: false }],
  show_after_page: 3,
  updated_at: '2026-03-01T09:30:00.000Z',
};

export const PutLeadFormBody = Type.Object({
  enabled: Type.Boolean(),
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  fields: Type.Optional(Type.Array(Field, { minItems: 1, maxItems: LEAD_FORM_FIELDS.length, description: 'Each field at most once; email is added (required) when missing.' })),
  show_after_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
}, { additionalProperties: false });
