import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { call, client, rank, role, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { Select } from '../components/select.tsx';
import { Table } from '../components/table.tsx';
import { formatDateTime } from '../format.ts';
import { bookHref, bookStatus, SORTS, STATUS_FILTERS, STATUS_WORDS, type Book, type Sort } from './book-facts.ts';
import { Conversion } from './conversion.tsx';

/** The first page is small, so the screen shows quickly; the next pages are larger, so a long list fills in few requests. */
const FIRST_PAGE = 24;
const NEXT_PAGES = 100;

interface Query {
  name: string;
  status: string;
  sort: Sort;
  view: 'grid' | 'list';
}

function queryFrom(params: Record<string, string>): Query {
  return {
    name: params.name ?? '',
    status: STATUS_FILTERS.some((s) => s.value === params.status) ? params.status! : '',
    sort: (SORTS.find((s) => s.value === params.sort)?.value ?? '-updated_at'),
    view: params.view === 'list' ? 'list' : 'grid',
  };
}

/** One page of books, with the cursor of the next (the list answers `{ data, meta }`). */
async function readBooks(query: Query, cursor: string | null) {
  const request = client.GET('/v1/books', {
    params: {
      query: {
        limit: cursor ? NEXT_PAGES : FIRST_PAGE,
        sort: query.sort,
        ...(query.name.trim() ? { 'filter[name]': query.name.trim() } : {}),
        ...(query.status ? { 'filter[status]': query.status as 'draft' } : {}),
        ...(cursor ? { cursor } : {}),
      },
    },
  });
  // `call` unwraps `data`; wrap the body once more to keep `meta` too.
  return call(request.then((r) => ({ ...r, data: r.data ? { data: r.data } : undefined })));
}

/** Books: the workspace's books as a grid or a list; search, filter, sort, page on, select several. */
export default function Books() {
  const { query: params, path, route } = useLocation();
  const query = queryFrom(params);
  const [typed, setTyped] = useState(query.name);
  const [books, setBooks] = useState<Book[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const writes = rank(role.value) >= rank('editor');
  const generation = useRef(0);
  const end = useRef<HTMLParagraphElement>(null);

  const setQuery = (change: Partial<Query>) => {
    const merged = { ...query, ...change };
    const search = new URLSearchParams();
    if (merged.name) search.set('name', merged.name);
    if (merged.status) search.set('status', merged.status);
    if (merged.sort !== '-updated_at') search.set('sort', merged.sort);
    if (merged.view !== 'grid') search.set('view', merged.view);
    const qs = search.toString();
    route(`${path}${qs ? `?${qs}` : ''}`, true);
  };

  const load = async (cursor: string | null) => {
    const mine = ++generation.current;
    setLoading(true);
    const result = await readBooks(query, cursor);
    if (mine !== generation.current) return;
    setLoading(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    const page = result.data;
    // A book that moved between pages (renamed, updated meanwhile) is shown once.
    setBooks((shown) => {
      const base = cursor ? shown : [];
      const seen = new Set(base.map((b) => b.random_id));
      return [...base, ...page.data.filter((b) => !seen.has(b.random_id))];
    });
    setNext(page.meta.has_more ? page.meta.next_cursor : null);
  };

  // Scrolling near the end reads the next page by itself ("Show more books" does it by keyboard).
  useEffect(() => {
    const sentinel = end.current;
    if (!sentinel || !next || loading) return;
    const observer = new IntersectionObserver((seen) => {
      if (seen.some((entry) => entry.isIntersecting)) void load(next);
    }, { rootMargin: '600px 0px' });
    observer.observe(sentinel);
    return () => observer.disconnect();
  }, [next, loading]);

  useEffect(() => {
    void load(null);
    // A new search, filter or sort reads from the first page.
  }, [query.name, query.status, query.sort]);

  const toggle = (id: string, on: boolean) => {
    setSelected((s) => {
      const copy = new Set(s);
      if (on) copy.add(id);
      else copy.delete(id);
      return copy;
    });
  };
  const allShown = books.length > 0 && books.every((b) => selected.has(b.random_id));

  return (
    <Page title="Books">
      {writes && (
        <p>
          <a class="button button-primary" href="/app/upload">Upload documents</a>
        </p>
      )}
      <form
        class="book-filters"
        role="search"
        aria-label="Books"
        onSubmit={(event) => {
          event.preventDefault();
          setQuery({ name: typed });
        }}
      >
        <div class="inline-form">
          <TextInput label="Search by name" type="text" value={typed} onValue={setTyped} />
          <Button type="submit">Search</Button>
        </div>
        <Select label="Status" value={query.status} options={STATUS_FILTERS} onValue={(status) => setQuery({ status })} />
        <Select label="Sort by" value={query.sort} options={SORTS} onValue={(sort) => setQuery({ sort: sort as Sort })} />
        <fieldset class="view-choice">
          <legend>Show as</legend>
          {(['grid', 'list'] as const).map((view) => (
            <label class="check" key={view}>
              <input type="radio" name="view" value={view} checked={query.view === view} onChange={() => setQuery({ view })} />
              {view === 'grid' ? 'Grid' : 'List'}
            </label>
          ))}
        </fieldset>
      </form>

      {writes && books.length > 0 && (
        <div class="selection-bar" role="group" aria-label="Selection">
          <label class="check check-all">
            <input type="checkbox" checked={allShown} onChange={(event) => setSelected(event.currentTarget.checked ? new Set(books.map((b) => b.random_id)) : new Set())} />
            Select all shown
          </label>
          <p role="status" class="selection-count">{selected.size === 0 ? 'No books selected.' : `${selected.size} ${selected.size === 1 ? 'book' : 'books'} selected.`}</p>
          {selected.size > 0 && <a class="button" href={`/app/bulk-settings?books=${[...selected].join(',')}`}>Change settings of the selected books</a>}
          {selected.size > 0 && <Button onClick={() => setSelected(new Set())}>Clear selection</Button>}
        </div>
      )}

      <ErrorMessage problem={problem} title="The books could not be read" />
      {loading && books.length === 0 && <Loading what="books" />}
      {!loading && !problem && books.length === 0 && (
        <p class="empty">{query.name || query.status ? 'No books match this search.' : 'This workspace has no books yet. Upload a document to make one.'}</p>
      )}
      {books.length > 0 && (query.view === 'grid'
        ? <BookGrid books={books} selectable={writes} selected={selected} onToggle={toggle} />
        : <BookTable books={books} selectable={writes} selected={selected} onToggle={toggle} />)}
      <p class="list-end" role="status" ref={end}>{books.length > 0 && `${books.length} ${books.length === 1 ? 'book' : 'books'} shown${next ? '' : ', all of them'}.`}</p>
      {next && <Button onClick={() => void load(next)} busy={loading}>Show more books</Button>}
    </Page>
  );
}

interface ListProps {
  books: Book[];
  selectable: boolean;
  selected: ReadonlySet<string>;
  onToggle: (id: string, on: boolean) => void;
}

function Cover({ book }: { book: Book }) {
  return book.thumbnail_url
    ? <img class="cover" src={book.thumbnail_url} alt="" loading="lazy" width={160} height={226} />
    : <span class="cover cover-none" aria-hidden="true" />;
}

function Pick({ book, selected, onToggle }: { book: Book; selected: boolean; onToggle: ListProps['onToggle'] }) {
  return (
    <label class="check pick">
      <input type="checkbox" checked={selected} onChange={(event) => onToggle(book.random_id, event.currentTarget.checked)} />
      <span class="visually-hidden">Select {book.name}</span>
    </label>
  );
}

function StatusBadge({ book }: { book: Book }) {
  const status = bookStatus(book);
  return <span class={`status status-${status}`}>{STATUS_WORDS[status]}</span>;
}

function BookGrid({ books, selectable, selected, onToggle }: ListProps) {
  return (
    <ul class="book-grid" aria-label="Books">
      {books.map((book) => (
        <li key={book.random_id} class="book-card">
          <Cover book={book} />
          <h2 class="book-name"><a href={bookHref(book)}>{book.name}</a></h2>
          <dl class="facts facts-inline">
            <dt>Status</dt>
            <dd><StatusBadge book={book} /></dd>
            <dt>Conversion</dt>
            <dd><Conversion book={book} /></dd>
            <dt>Pages</dt>
            <dd>{book.page_count}</dd>
            <dt>Updated</dt>
            <dd>{formatDateTime(book.updated_at)}</dd>
          </dl>
          {selectable && <Pick book={book} selected={selected.has(book.random_id)} onToggle={onToggle} />}
        </li>
      ))}
    </ul>
  );
}

function BookTable({ books, selectable, selected, onToggle }: ListProps) {
  return (
    <Table
      caption="Books"
      hideCaption
      head={
        <tr>
          {selectable && <th scope="col"><span class="visually-hidden">Selected</span></th>}
          <th scope="col"><span class="visually-hidden">Cover</span></th>
          <th scope="col">Name</th>
          <th scope="col">Status</th>
          <th scope="col">Conversion</th>
          <th scope="col">Pages</th>
          <th scope="col">Updated</th>
        </tr>
      }
    >
      {books.map((book) => (
        <tr key={book.random_id}>
          {selectable && <td><Pick book={book} selected={selected.has(book.random_id)} onToggle={onToggle} /></td>}
          <td class="cover-cell"><Cover book={book} /></td>
          <th scope="row"><a href={bookHref(book)}>{book.name}</a></th>
          <td><StatusBadge book={book} /></td>
          <td><Conversion book={book} /></td>
          <td>{book.page_count}</td>
          <td>{formatDateTime(book.updated_at)}</td>
        </tr>
      ))}
    </Table>
  );
}
