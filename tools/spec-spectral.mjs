// Spectral, in-process, for `pnpm spec:lint`: the ruleset and its packages are loaded from where the
// ruleset is installed (spec/), the way `spectral lint` loads them (bundled with the builtins and
// commonjs plugins), and a finding on a `$ref` keeps the path of that `$ref`.
//
// Why in-process: Spectral maps every result's path from the resolved document back to where the
// value is written, following each `$ref` on the way, the last one too. A finding on the property
// `fooBar: {$ref: '#/components/schemas/Timestamp'}` comes back as `components.schemas.Timestamp`
// (stoplightio/spectral#1280 and #2423, both open), and no output format holds the path the rule
// reported. That mapping is the document inventory's `findAssociatedItemForPath`, which Spectral also
// hands every rule function in its context; here each run's inventory gets one that stops at a `$ref`
// the path ends on, and maps everything else as before (so a finding inside a shared schema is still
// reported once, where the schema is written).
import * as fs from 'node:fs';
import { createRequire } from 'node:module';

/**
 * One Spectral result, as `spectral lint --format json` prints it.
 * @typedef {object} SpectralResult
 * @property {string | number} code
 * @property {string} message
 * @property {(string | number)[]} path into the linted document: the `$ref` node itself when the
 *   finding is on a value written as a `$ref`
 * @property {number} severity 0 error, 1 warning, 2 information, 3 hint
 * @property {string} [source] absolute path of the linted document (or of a document it references)
 * @property {{ start: { line: number, character: number } }} range 0-based, in `source`
 */

/**
 * Lints one JSON or YAML document with a Spectral ruleset.
 *
 * @param {string} file absolute path of the document (the JSON bundle)
 * @param {string} ruleset absolute path of the ruleset; Spectral's packages are resolved from there
 * @returns {Promise<SpectralResult[]>}
 * @example
 * const results = await runSpectral('/abs/spec/dist/openapi.json', '/abs/spec/rules/spectral.yaml');
 */
export async function runSpectral(file, ruleset) {
  const require = createRequire(ruleset);
  const { Spectral, Document } = require('@stoplight/spectral-core');
  const { Json, Yaml } = require('@stoplight/spectral-parsers');
  const { bundleAndLoadRuleset } = require('@stoplight/spectral-ruleset-bundler/with-loader');
  const { builtins } = require('@stoplight/spectral-ruleset-bundler/plugins/builtins');
  const { commonjs } = require('@stoplight/spectral-ruleset-bundler/plugins/commonjs');
  const loaded = await bundleAndLoadRuleset(ruleset, { fs, fetch: globalThis.fetch }, [
    builtins(),
    commonjs(),
  ]);
  // The rules that apply to this file, its `overrides` merged in: Spectral builds that ruleset anew
  // from the definitions on every run, so the functions are wrapped in it, not in `loaded`.
  const rules = loaded.fromSource(file);
  for (const rule of Object.values(rules.rules)) {
    // A new list of new entries: the entries themselves are shared with `loaded`'s definitions.
    // biome-ignore lint/suspicious/noThenProperty: `then` is the name of a Spectral rule's actions.
    rule.then = rule.then.map((then) => ({ ...then, function: keepingRefs(then.function) }));
  }
  const spectral = new Spectral();
  spectral.setRuleset(rules);
  const parser = file.endsWith('.json') ? Json : Yaml;
  return spectral.run(new Document(fs.readFileSync(file, 'utf8'), parser, file));
}

/** A rule function that first gives the run's inventory the `$ref`-keeping mapping. */
function keepingRefs(fn) {
  return function (input, options, context) {
    keepRefPaths(context.documentInventory);
    return fn.call(this, input, options, context);
  };
}

const kept = new WeakSet();

/**
 * Makes `inventory` map a resolved path that ends on a `$ref` to that `$ref` (in the document that
 * holds it) instead of to the `$ref`'s target. So does a path that ends below it on something missing
 * (`responses/404/headers` of a `404: {$ref}` without headers): that finding is about the value the
 * `$ref` stands for. Paths that go on into the target map as Spectral maps them.
 */
function keepRefPaths(inventory) {
  if (kept.has(inventory)) return;
  kept.add(inventory);
  const map = inventory.findAssociatedItemForPath.bind(inventory);
  inventory.findAssociatedItemForPath = (path, resolved) => {
    const end = resolved ? existingPrefix(inventory.resolved, path) : 0;
    if (end > 0) {
      // Where the parent of the last node that exists is written, then whether that node is a `$ref`.
      const parent = map(path.slice(0, end - 1), true);
      const holder = parent && valueAt(parent.document.data, parent.path);
      const key = path[end - 1];
      const value = isObject(holder) || Array.isArray(holder) ? ownValue(holder, key) : undefined;
      if (isObject(value) && typeof value.$ref === 'string') {
        const at = [...parent.path, key];
        return { document: parent.document, path: at, missingPropertyPath: [...at, ...path.slice(end)] };
      }
    }
    return map(path, resolved);
  };
}

/** How many of `path`'s segments exist in `data`, from the top. */
function existingPrefix(data, path) {
  let value = data;
  for (const [index, segment] of path.entries()) {
    if (!isObject(value) && !Array.isArray(value)) return index;
    if (!Object.hasOwn(value, segment)) return index;
    value = value[segment];
  }
  return path.length;
}

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

const ownValue = (holder, key) => (Object.hasOwn(holder, key) ? holder[key] : undefined);

function valueAt(data, path) {
  let value = data;
  for (const segment of path) {
    if (!isObject(value) && !Array.isArray(value)) return undefined;
    value = ownValue(value, segment);
  }
  return value;
}
