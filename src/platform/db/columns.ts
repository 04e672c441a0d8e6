/** Column types every table shares. */
import { timestamp } from 'drizzle-orm/pg-core';

/** An instant: timestamptz at millisecond precision (what JavaScript dates hold), read as a Date. */
export const instant = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/** The largest value of a PostgreSQL `integer` (page numbers, serial ids): comparing a column with a larger one fails the query. */
export const MAX_INTEGER = 2_147_483_647;
