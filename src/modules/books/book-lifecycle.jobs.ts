/** Time-driven status moves: scheduled publication and the customer's expiry. */
import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/queue.ts';
import type { BooksService } from './books.service.ts';

declare module '../../platform/jobs/queue.ts' {
  interface JobPayloads {
    'books.publish-scheduled': { bookId: number };
    'books.expire': { bookId: number };
  }
}

const BookPayload = Type.Object({ bookId: Type.Integer({ minimum: 1 }) });

export function bookLifecycleJobs(books: BooksService) {
  return [
    defineJob({
      name: 'books.publish-scheduled',
      version: 1,
      schema: BookPayload,
      // The job may be due again after a reschedule; the update is conditional, so running twice is harmless.
      handle: async ({ bookId }) => ({ published: await books.publishScheduled(bookId) }),
    }),
    defineJob({
      name: 'books.expire',
      version: 1,
      schema: BookPayload,
      handle: async ({ bookId }) => ({ unpublished: await books.expire(bookId) }),
    }),
  ];
}
