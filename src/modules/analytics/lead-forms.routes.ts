/** A book's lead form (issue 5: "shown when the book is configured for it"); submissions arrive at POST /read/{id}/lead. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authOf } from '../../platform/http/route-config.ts';
import { BookParams } from '../books/books.schemas.ts';
import type { LeadFormsService } from './lead-forms.service.ts';
import { LeadForm, PutLeadFormBody, exampleLeadForm } from './lead-forms.schemas.ts';

const LeadFormRef = Type.Ref('LeadForm');

export const leadFormsRoutes: FastifyPluginAsyncTypebox<{ leadForms: LeadFormsService }> = async (app, { leadForms }) => {
  app.addSchema(LeadForm);

  app.get('/books/:book/lead-form', {
    schema: {
      operationId: 'getLeadForm', tags: ['Lead forms'], summary: "A book's lead form",
      description: 'A book that was never configured answers the default form, disabled (`updated_at` null).',
      params: BookParams,
      response: { 200: Type.Object({ data: LeadFormRef }, { examples: [{ data: exampleLeadForm }] }) },
    },
    config: { scope: 'books:read' },
  }, async (request) => ({ data: await leadForms.get(authOf(request), request.params.book) }));

  app.put('/books/:book/lead-form', {
    schema: {
      operationId: 'putLeadForm', tags: ['Lead forms'], summary: "Set a book's lead form",
      description:
        '`enabled` is required; other fields left out keep their values. While enabled, the reader opens the form once the reader reaches `show_after_page`; ' +
        'submissions are stored as leads (for the leads export), identify the reader for the rest of the visit and count as `lead_form_submitted`.',
      params: BookParams, body: PutLeadFormBody,
      response: { 200: Type.Object({ data: LeadFormRef }) },
    },
    config: { scope: 'books:write' },
  }, async (request) => ({ data: await leadForms.put(authOf(request), request.params.book, request.body) }));
};
