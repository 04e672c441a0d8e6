/**
 * A book's lead form: whether the reader asks for the reader's details, with
 * which fields, from which page. Kept in its own table (one row per book)
 * rather than in the book's settings. Submissions are stored by
 * ReaderEventsService.submitLead.
 */
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import { findWorkspaceBook } from '../books/books.service.ts';
import type { BookRow } from '../books/books.tables.ts';
import type { ReaderLeadForm } from '../reader/reader.types.ts';
import { leadForms, type LeadFormField, type LeadFormRow } from './analytics.tables.ts';

export interface Caller {
  workspaceId: number;
}

export interface LeadFormRecord {
  book_id: string;
  enabled: boolean;
  title: string;
  description: string | null;
  fields: LeadFormField[];
  show_after_page: number;
  updated_at: string | null;
}

export interface LeadFormChange {
  enabled: boolean;
  title?: string;
  description?: string | null;
  fields?: LeadFormField[];
  show_after_page?: number;
}

/** What a book's form is until it is configured. */
export const DEFAULT_LEAD_FORM = {
  enabled: false,
  title: 'Stay in touch',
  description: null,
  fields: [{ name: 'name', required: false }, { name: 'email', required: true }] as LeadFormField[],
  showAfterPage: 2,
};

function toRecord(bookRandomId: string, row: LeadFormRow | undefined): LeadFormRecord {
  const form = row ?? { ...DEFAULT_LEAD_FORM, updatedAt: null };
  return {
    book_id: bookRandomId,
    enabled: form.enabled,
    title: form.title,
    description: form.description,
    fields: form.fields,
    show_after_page: form.showAfterPage,
    updated_at: form.updatedAt ? form.updatedAt.toISOString() : null,
  };
}

/** Each field once, email always there and required. */
function normaliseFields(fields: LeadFormField[]): LeadFormField[] {
  const names = fields.map((f) => f.name);
  const repeated = names.filter((n, i) => names.indexOf(n) !== i);
  if (repeated.length > 0) throw ERRORS.validation({ fields: [`Each field may appear once; repeated: ${[...new Set(repeated)].join(', ')}.`] });
  const email = fields.find((f) => f.name === 'email');
  if (!email) return [...fields, { name: 'email', required: true }];
  return fields.map((f) => (f.name === 'email' ? { name: 'email', required: true } : { name: f.name, required: f.required }));
}

export class LeadFormsService {
  private readonly db: Db;

  constructor(deps: { db: Db }) {
    this.db = deps.db;
  }

  private findBook(caller: Caller, randomId: string): Promise<BookRow> {
    return findWorkspaceBook(this.db, caller.workspaceId, randomId);
  }

  async get(caller: Caller, bookRandomId: string): Promise<LeadFormRecord> {
    const book = await this.findBook(caller, bookRandomId);
    const [row] = await this.db.select().from(leadForms).where(eq(leadForms.bookId, book.id));
    return toRecord(book.randomId, row);
  }

  /** Sets the form; fields left out keep their current (or default) values. */
  async put(caller: Caller, bookRandomId: string, change: LeadFormChange): Promise<LeadFormRecord> {
    const book = await this.findBook(caller, bookRandomId);
    const fields = change.fields ? normaliseFields(change.fields) : undefined;
    const title = change.title?.trim();
    if (change.title !== undefined && !title) throw ERRORS.validation({ title: ['The title must not be blank.'] });
    const description = change.description === undefined ? undefined : change.description?.trim() || null;
    const now = new Date();
    const [row] = await this.db
      .insert(leadForms)
      .values({
        bookId: book.id,
        workspaceId: caller.workspaceId,
        enabled: change.enabled,
        title: title ?? DEFAULT_LEAD_FORM.title,
        description: description ?? DEFAULT_LEAD_FORM.description,
        fields: fields ?? DEFAULT_LEAD_FORM.fields,
        showAfterPage: change.show_after_page ?? DEFAULT_LEAD_FORM.showAfterPage,
        updatedAt: now,
      })
      .onConflictDoUpdate({
        target: leadForms.bookId,
        set: {
          enabled: change.enabled,
          ...(title !== undefined ? { title } : {}),
          ...(description !== undefined ? { description } : {}),
          ...(fields ? { fields } : {}),
          ...(change.show_after_page !== undefined ? { showAfterPage: change.show_after_page } : {}),
          updatedAt: now,
        },
      })
      .returning();
    return toRecord(book.randomId, row);
  }

}

/** The form as the reader shows it, or null when the book has none enabled (read with every reader page, like its settings). */
export async function loadReaderLeadForm(db: Db, bookId: number): Promise<ReaderLeadForm | null> {
  const [row] = await db.select().from(leadForms).where(and(eq(leadForms.bookId, bookId), eq(leadForms.enabled, true)));
  if (!row) return null;
  return { title: row.title, text: row.description, fields: row.fields.map((f) => [f.name, f.required]), after: row.showAfterPage };
}

/** The fields of the book's enabled form, or null (a submission to a book without one is refused). */
export async function activeLeadFormFields(db: Db, bookId: number): Promise<LeadFormField[] | null> {
  const [row] = await db.select({ fields: leadForms.fields }).from(leadForms).where(and(eq(leadForms.bookId, bookId), eq(leadForms.enabled, true)));
  return row?.fields ?? null;
}
