/**
 * Response serializers compiled on a route's first response instead of when the server starts.
 *
 * fast-json-stringify compiles every response schema of every route at start-up: most of the start's CPU (about
 * three quarters of a second on a quiet machine for this API's 80 operations), paid by every process, for routes many
 * of them never answer (a node that mostly converts, a test). Compiled on first use, each costs a few milliseconds
 * once, in the request that needs it. The output is the same: same compiler, same schemas, same options.
 */
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = SerializerSelector.SerializerFactory;

export function lazySerializers(factory: SerializerFactory = SerializerSelector()): SerializerFactory {
  return (externalSchemas, options) => {
    const compile = factory(externalSchemas, options);
    return (route) => {
      let serialize: SerializerSelector.Serializer | undefined;
      return (data) => (serialize ??= compile(route))(data);
    };
  };
}
