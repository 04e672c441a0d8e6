/**
 * Sends one document to POST /v1/books with XMLHttpRequest, the one browser
 * API that reports the bytes of a request body as they go (fetch cannot yet
 * in every browser). The request and its answer keep the typed client's
 * types; the headers are the ones the client adds (the session's CSRF token,
 * an Idempotency-Key).
 */
import type { operations } from '@flipbook/client';
import { account, problemOf, type Problem, type Result } from '../api.ts';

export type UploadFields = Omit<operations['uploadBook']['requestBody']['content']['multipart/form-data'], 'files[]'>;
export type UploadAccepted = operations['uploadBook']['responses'][202]['content']['application/json']['data'];

export interface Sending {
  /** Resolves with the accepted batch or the refusal; an aborted send resolves with status 0 and type "Aborted". */
  done: Promise<Result<UploadAccepted>>;
  abort: () => void;
}

export function sendDocument(file: File, fields: UploadFields, onProgress: (sent: number, total: number) => void): Sending {
  const xhr = new XMLHttpRequest();
  const form = new FormData();
  form.append('files[]', file);
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, String(value));
  const done = new Promise<Result<UploadAccepted>>((resolve) => {
    const refused = (problem: Problem) => resolve({ ok: false, problem });
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    xhr.onload = () => {
      let body: unknown;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = undefined;
      }
      if (xhr.status === 202 || xhr.status === 200) return resolve({ ok: true, data: (body as { data: UploadAccepted }).data });
      const headers = new Headers();
      const retry = xhr.getResponseHeader('retry-after');
      if (retry) headers.set('retry-after', retry);
      if (xhr.status === 401 && account.value) account.value = null;
      refused(problemOf(new Response(null, { status: xhr.status, headers }), body));
    };
    xhr.onerror = () => refused({ status: 0, type: 'NetworkError', message: 'The file could not be sent: the service could not be reached. Check your connection and try again.', details: {}, retryAfterSeconds: null });
    xhr.onabort = () => refused({ status: 0, type: 'Aborted', message: 'Cancelled before it was sent.', details: {}, retryAfterSeconds: null });
  });
  xhr.open('POST', '/v1/books');
  const csrf = account.value?.csrf_token;
  if (csrf) xhr.setRequestHeader('x-csrf-token', csrf);
  xhr.setRequestHeader('idempotency-key', crypto.randomUUID());
  xhr.send(form);
  return { done, abort: () => xhr.abort() };
}
