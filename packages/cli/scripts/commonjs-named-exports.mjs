// An esbuild plugin for the bundle: `await import('<a CommonJS package>')` gets the package's named
// exports, as it does in Node. With code splitting, esbuild makes such a package a chunk whose only
// export is `default` (its module.exports; evanw/esbuild#3245, open), so `const { stringify } = await
// import('yaml')` passed its tests on the sources and failed in the bundle ("stringify is not a
// function"). Each such import is sent through a small ES module that re-exports the package's names.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const NAMESPACE = 'commonjs-named-exports';
const require = createRequire(import.meta.url);

/** Whether Node reads `file` as CommonJS: `.cjs`, or `.js` under a package.json without `"type": "module"`. */
function isCommonJs(file) {
  if (file.endsWith('.cjs')) return true;
  if (!file.endsWith('.js')) return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type !== 'module';
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
    if (dirname(dir) === dir) return true;
  }
}

/**
 * The names a CommonJS module exports, read by loading it here (Node finds them with a lexer when an
 * ES module imports it; loading finds at least those). `default` is module.exports itself, as in Node.
 */
function exportedNames(file) {
  return Object.keys(require(file)).filter((name) => name !== 'default');
}

/**
 * Re-exports, for a dynamic import of a package that resolves to CommonJS, module.exports as `default`
 * and each of its names, as Node's ES module loader does.
 *
 * @example
 * await build({ bundle: true, splitting: true, format: 'esm', plugins: [commonJsNamedExports] });
 */
export const commonJsNamedExports = {
  name: NAMESPACE,
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData === NAMESPACE) return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: NAMESPACE,
      });
      // Anything else is left to esbuild, which resolves it again as usual (and reports its errors).
      if (resolved.errors.length > 0 || resolved.external || !isCommonJs(resolved.path)) return undefined;
      return { path: resolved.path, namespace: NAMESPACE };
    });
    build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
      // require(), not `import … from`: module.exports as it is, whatever its __esModule says (Node's
      // rule). Each name is exported as a string, so any key (a reserved word too) is one.
      const lines = [`const cjs = require(${JSON.stringify(args.path)});`, 'export default cjs;'];
      for (const [at, name] of exportedNames(args.path).entries())
        lines.push(
          `const e${at} = cjs[${JSON.stringify(name)}];`,
          `export { e${at} as ${JSON.stringify(name)} };`,
        );
      return {
        contents: lines.join('\n'),
        resolveDir: dirname(args.path),
        loader: 'js',
      };
    });
  },
};
