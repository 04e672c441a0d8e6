import { boolean, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { instant } from '../../platform/db/columns.ts';


/** The workspace brand (spec part 2, Brand): at most one per workspace. */
export const brands = pgTable('brands', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  companyName: text('company_name').notNull(),
  /** Storage key of the processed logo (WebP, content-hashed, so its URL never changes meaning). */
  logoKey: text('logo_key'),
  logoWidth: integer('logo_width'),
  logoHeight: integer('logo_height'),
  contactNumber: text('contact_number'),
  websiteUrl: text('website_url'),
  /** A Google Analytics measurement id (G-…, UA-…). */
  googleAnalytics: text('google_analytics'),
  aboutBrand: text('about_brand'),
  /** While true (and the plan allows it) public flipbooks show this brand instead of the service's. */
  takeOverBranding: boolean('take_over_branding').notNull().default(false),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('brands_workspace_key').on(t.workspaceId)]);

export const brandColors = pgTable('brand_colors', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  brandId: integer('brand_id').notNull().references(() => brands.id, { onDelete: 'cascade' }),
  primaryColor: text('primary_color'),
  secondaryColor: text('secondary_color'),
  tertiaryColor: text('tertiary_color'),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('brand_colors_brand_key').on(t.brandId)]);

export const brandSocialMedia = pgTable('brand_social_media', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  brandId: integer('brand_id').notNull().references(() => brands.id, { onDelete: 'cascade' }),
  twitter: text('twitter'),
  linkedin: text('linkedin'),
  facebook: text('facebook'),
  youtube: text('youtube'),
  instagram: text('instagram'),
  pinterest: text('pinterest'),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('brand_social_media_brand_key').on(t.brandId)]);

export type BrandRow = typeof brands.$inferSelect;
export type BrandColorRow = typeof brandColors.$inferSelect;
export type BrandSocialRow = typeof brandSocialMedia.$inferSelect;
