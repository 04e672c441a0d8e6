/**
 * What a book made from content was made from: the source (catalog render,
 * template content, editor pages), its input kept for re-rendering, the editor
 * canvas kept verbatim for re-editing, and the product areas the renderer
 * drew (item key per rectangle) for live prices in the reader.
 */
import { index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { instant } from '../../platform/db/columns.ts';
import { books } from '../books/books.tables.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';

export interface StoredProductArea {
  page: number;
  key: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** The price label and stock mark drawn at render time (live prices show only what changed). */
  price: string | null;
  outOfStock: boolean;
}

export const bookSources = pgTable('book_sources', {
  bookId: integer('book_id').primaryKey().references(() => books.id, { onDelete: 'cascade' }),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  /** catalog | template | konva */
  kind: text('kind').notNull(),
  templateId: integer('template_id'),
  catalogId: integer('catalog_id'),
  /** The request's content (template), selection and cover (catalog) or stored page keys (konva). */
  input: jsonb('input').$type<Record<string, unknown>>().notNull(),
  /** POST /books/konva `canvas`, verbatim, for re-editing. */
  canvas: jsonb('canvas').$type<Record<string, unknown>>(),
  productAreas: jsonb('product_areas').$type<StoredProductArea[]>().notNull().default([]),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [index('book_sources_catalog_idx').on(t.catalogId)]);

export type BookSourceRow = typeof bookSources.$inferSelect;
