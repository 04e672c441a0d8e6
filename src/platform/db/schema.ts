/** Every table of the service, for Drizzle and drizzle-kit. Each area owns its tables file. */
export * from '../../modules/workspaces/workspaces.tables.ts';
export * from '../http/http.tables.ts';
export * from '../../modules/books/books.tables.ts';
export * from '../../modules/events/events.tables.ts';
export * from '../mail/mail.tables.ts';
export * from '../../modules/access/access.tables.ts';
export * from '../../modules/analytics/analytics.tables.ts';
export * from '../../modules/books/bulk-settings.tables.ts';
export * from '../../modules/brand/brand.tables.ts';
export * from '../../modules/catalogs/catalogs.tables.ts';
export * from '../../modules/connector/connector.tables.ts';
export * from '../../modules/content/content.tables.ts';
export * from '../../modules/webhooks/webhooks.tables.ts';
export * from '../../modules/books/conversion-lease.tables.ts';
export * from '../../modules/people/people.tables.ts';
export * from '../../modules/oauth/oauth.tables.ts';
