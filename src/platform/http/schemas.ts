/** Response and query shapes shared by every route. */
import { Type, type TSchema } from 'typebox';
import { ERROR_TYPES } from '../errors.ts';

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      message: Type.String({ description: 'Human-readable; may change. Branch on status and type instead.' }),
      type: Type.Union(Object.keys(ERROR_TYPES).map((t) => Type.Literal(t)), { description: 'Stable error type.' }),
      details: Type.Optional(
        Type.Record(Type.String(), Type.Array(Type.String()), {
          description: 'Field name → messages (validation), or the facts behind the error (scopes, plan).',
        }),
      ),
    }),
  },
  { $id: 'ErrorEnvelope', title: 'Error' },
);

/** `{ data }` */
export function Data<T extends TSchema>(data: T) {
  return Type.Object({ data });
}

/** `{ data, meta }` with free-form meta. */
export function DataWithMeta<T extends TSchema>(data: T) {
  return Type.Object({ data, meta: Type.Object({}, { additionalProperties: true }) });
}

export const CursorMeta = Type.Object({
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` to get the next page; null on the last page.' }),
  has_more: Type.Boolean(),
});

/** `{ data: T[], meta: { next_cursor, has_more } }` */
export function CursorPage<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), meta: CursorMeta });
}

export function cursorQuery(maxLimit: number, defaultLimit: number) {
  return {
    cursor: Type.Optional(Type.String({ maxLength: 512, description: 'Opaque cursor from `meta.next_cursor`.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit, description: `Page size, 1-${maxLimit}; default ${defaultLimit}.` })),
  };
}

export const Message = Type.Object({ message: Type.String() });

export const DateTime = Type.String({ format: 'date-time' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
