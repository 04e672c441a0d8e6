/**
 * A book's lead form: whether the reader asks readers for their details,
 * with which fields (the e-mail address always, required), from which page,
 * under what title; a preview of the form as the reader shows it, and the
 * leads collected so far as CSV.
 */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso/router';
import type { components } from '@flipbook/client';
import { call, client, rank, role, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { DraftNotice } from '../components/draft-notice.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { Field, TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { notify } from '../components/toast.tsx';
import { draftKey, useDraft } from '../draft.ts';
import { formatDateTime } from '../format.ts';
import { useResource } from '../resource.ts';
import { bookHref, type Book } from '../books/book-facts.ts';

type LeadForm = components['schemas']['LeadForm'];
type FieldName = LeadForm['fields'][number]['name'];

const FIELDS: readonly FieldName[] = ['name', 'email', 'phone', 'company', 'message'];
const FIELD_WORDS: Record<FieldName, string> = { name: 'Name', email: 'E-mail address', phone: 'Phone number', company: 'Company', message: 'Message' };

/** The form's values; every field is listed (asked or not) in the order the reader shows them. */
interface Form {
  enabled: boolean;
  title: string;
  description: string;
  show_after_page: string;
  fields: { name: FieldName; asked: boolean; required: boolean }[];
}

function formOf(lead: LeadForm): Form {
  const asked = lead.fields.map((f) => ({ name: f.name, asked: true, required: f.required }));
  const others = FIELDS.filter((name) => !lead.fields.some((f) => f.name === name)).map((name) => ({ name, asked: false, required: false }));
  return { enabled: lead.enabled, title: lead.title, description: lead.description ?? '', show_after_page: String(lead.show_after_page), fields: [...asked, ...others] };
}

const same = (a: Form, b: Form) => JSON.stringify(a) === JSON.stringify(b);

export default function LeadFormScreen() {
  const { params } = useRoute();
  const bookId = params.bookId!;
  const loaded = useResource(async () => {
    const [book, lead] = await Promise.all([
      call(client.GET('/v1/books/{book}', { params: { path: { book: bookId } } })),
      call(client.GET('/v1/books/{book}/lead-form', { params: { path: { book: bookId } } })),
    ]);
    if (!book.ok) return book;
    if (!lead.ok) return lead;
    return { ok: true as const, data: { book: book.data, lead: lead.data } };
  });
  if (!loaded.data) {
    return (
      <Page title="Lead form">
        {loaded.loading && <Loading what="the lead form" />}
        <ErrorMessage problem={loaded.problem} title="The lead form could not be read" />
      </Page>
    );
  }
  return <LeadFormEditor book={loaded.data.book} initial={loaded.data.lead} />;
}

function LeadFormEditor({ book, initial }: { book: Book; initial: LeadForm }) {
  const writes = rank(role.value) >= rank('editor');
  const [lead, setLead] = useState(initial);
  const draft = useDraft(draftKey('lead-form', book.random_id), () => formOf(lead), { base: lead.updated_at ?? undefined, differs: (v) => !same(v, formOf(lead)) });
  const form = draft.value;
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const set = <K extends keyof Form>(key: K, value: Form[K]) => draft.set((f) => ({ ...f, [key]: value }));
  const setField = (name: FieldName, change: Partial<Form['fields'][number]>) =>
    draft.set((f) => ({ ...f, fields: f.fields.map((field) => (field.name === name ? { ...field, ...change } : field)) }));

  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const page = Number(form.show_after_page);
    const body = {
      enabled: form.enabled,
      title: form.title,
      description: form.description.trim() === '' ? null : form.description,
      // A page that is not a whole number is sent as typed, so the API's refusal names the field.
      show_after_page: Number.isInteger(page) ? page : (form.show_after_page as unknown as number),
      fields: form.fields.filter((f) => f.asked || f.name === 'email').map((f) => ({ name: f.name, required: f.name === 'email' || f.required })),
    };
    const result = await call(client.PUT('/v1/books/{book}/lead-form', { params: { path: { book: book.random_id } }, body }));
    setBusy(false);
    setProblem(result.ok ? null : result.problem);
    if (result.ok) {
      setLead(result.data);
      draft.saved(formOf(result.data));
      notify(result.data.enabled ? 'The lead form was saved: readers see it from now on.' : 'The lead form was saved; it is switched off.');
    }
  };

  return (
    <Page title={`Lead form: ${book.name}`}>
      <p><a href={bookHref(book)}>Back to the book</a> · <a href={`${bookHref(book)}/share`}>Share and embed</a></p>
      <div class="book-layout">
        <section class="card stack" aria-labelledby="lead-heading">
          <h2 id="lead-heading">The form</h2>
          <p>While it is on, the reader asks for these details once a reader reaches the page below (the last page for shorter books), at most once a visit. What readers send is kept as leads.</p>
          {writes ? (
            <form class="stack" onSubmit={save}>
              <DraftNotice restored={draft.restored} onDiscard={() => draft.discard(formOf(lead))} />
              <ErrorMessage problem={problem} shownFields={['title', 'description', 'show_after_page']} title="The lead form was not saved" />
              <label class="check">
                <input type="checkbox" checked={form.enabled} onChange={(event) => set('enabled', event.currentTarget.checked)} />
                Show the lead form in the reader
              </label>
              <TextInput label="Title" hint="At most 120 characters." maxLength={120} value={form.title} onValue={(v) => set('title', v)} errors={fieldErrors(problem, 'title')} />
              <Field label="Description" hint="A sentence under the title, e.g. what readers get; optional." errors={fieldErrors(problem, 'description')}>
                {(control) => <textarea {...control} rows={3} maxLength={1000} value={form.description} onInput={(event) => set('description', event.currentTarget.value)} />}
              </Field>
              <TextInput label="Show after page" hint="The form opens when the reader reaches this page." inputMode="numeric" value={form.show_after_page} onValue={(v) => set('show_after_page', v)} errors={fieldErrors(problem, 'show_after_page')} />
              <fieldset>
                <legend>Fields</legend>
                {form.fields.map((field) => field.name === 'email' ? (
                  <p key={field.name} class="lead-field">{FIELD_WORDS.email}: always asked, required.</p>
                ) : (
                  <div key={field.name} class="lead-field">
                    <label class="check">
                      <input type="checkbox" checked={field.asked} onChange={(event) => setField(field.name, { asked: event.currentTarget.checked })} />
                      Ask for: {FIELD_WORDS[field.name]}
                    </label>
                    {field.asked && (
                      <label class="check">
                        <input type="checkbox" checked={field.required} onChange={(event) => setField(field.name, { required: event.currentTarget.checked })} />
                        {FIELD_WORDS[field.name]} required
                      </label>
                    )}
                  </div>
                ))}
                {fieldErrors(problem, 'fields') && <ul class="field-errors">{fieldErrors(problem, 'fields')!.map((m) => <li key={m}>{m}</li>)}</ul>}
              </fieldset>
              <Button type="submit" variant="primary" busy={busy}>Save lead form</Button>
            </form>
          ) : (
            <dl class="facts">
              <dt>In the reader</dt>
              <dd>{lead.enabled ? 'Shown' : 'Off'}</dd>
              <dt>Title</dt>
              <dd>{lead.title}</dd>
              <dt>After page</dt>
              <dd>{lead.show_after_page}</dd>
              <dt>Fields</dt>
              <dd>{lead.fields.map((f) => `${FIELD_WORDS[f.name]}${f.required ? ' (required)' : ''}`).join(', ')}</dd>
            </dl>
          )}
          <p class="hint">{lead.updated_at ? `Last saved ${formatDateTime(lead.updated_at)}.` : 'Never saved: this is the default form.'}</p>
          <p><a href={`/v1/exports/books/${encodeURIComponent(book.random_id)}/leads`} download>Download the leads (CSV)</a></p>
        </section>
        <section class="card lead-preview" aria-labelledby="lead-preview-heading">
          <h2 id="lead-preview-heading">Preview</h2>
          <p class="hint">How the reader shows the form{form.enabled ? '' : ' once it is on'}.</p>
          <div class="lead-sample" aria-hidden="true">
            <p class="lead-sample-title">{form.title || 'Untitled'}</p>
            {form.description.trim() && <p>{form.description}</p>}
            {form.fields.filter((f) => f.asked || f.name === 'email').map((f) => (
              <div key={f.name} class="lead-sample-field">
                <span>{FIELD_WORDS[f.name]}{f.name === 'email' || f.required ? ' *' : ''}</span>
                <span class="lead-sample-input" />
              </div>
            ))}
            <span class="lead-sample-button">Send</span>
          </div>
        </section>
      </div>
    </Page>
  );
}
