import { expect, test } from 'vitest';
import { FileError } from '../../src/computers/files/driver.js';
import { isWritablePath, MAX_PATH_BYTES, normalizeComputerPath } from '../../src/computers/files/paths.js';

test.each([
  ['/', '/'],
  ['/home/svc/a.txt', '/home/svc/a.txt'],
  ['/home//svc/./a.txt/', '/home/svc/a.txt'],
  ['/home/svc/../svc/a', '/home/svc/a'],
  ['/../../etc/passwd', '/etc/passwd'],
  ['/home/..', '/'],
  ['/a/b/../../..', '/'],
  ['/é/ß', '/é/ß'],
])('normalizeComputerPath(%j) is %j', (input, output) => {
  expect(normalizeComputerPath(input)).toBe(output);
});

test.each([
  ['relative', 'home/svc'],
  ['empty', ''],
  ['a NUL', '/home/svc/a\0b'],
  ['over 4096 bytes', `/${'é'.repeat(MAX_PATH_BYTES / 2)}`],
])('normalizeComputerPath refuses a path that is %s (invalid_path)', (_name, input) => {
  let error: unknown;
  try {
    normalizeComputerPath(input);
  } catch (failure) {
    error = failure;
  }
  expect(error).toBeInstanceOf(FileError);
  expect((error as FileError).reason).toBe('invalid_path');
});

test('4096 bytes exactly is accepted', () => {
  const path = `/${'a'.repeat(MAX_PATH_BYTES - 1)}`;
  expect(normalizeComputerPath(path)).toBe(path);
});

test.each([
  ['/home', true],
  ['/home/svc/x', true],
  ['/homework', false],
  ['/tmp/x', false],
  ['/', false],
])('isWritablePath(%j) is %j', (path, writable) => {
  expect(isWritablePath(path)).toBe(writable);
});
