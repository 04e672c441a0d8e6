/**
 * Response serializers compiled on a route's first response instead of when the server starts.
 *
 * fast-json-stringify compiles every response schema of every route at start-up: the largest share of a start's CPU
 * (profiled: about 3 s of CPU per start on a loaded 2-core machine, for this API's 130-odd operations), paid by every
 * process, for routes many of them never answer (a node that mostly converts, a test). Compiled on first use, each
 * costs a few milliseconds once, in the request that needs it. The output is the same: same compiler, same schemas,
 * same options.
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
