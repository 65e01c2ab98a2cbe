import { type ItemOf, itemsOf } from '@svc/react';
import { useEffect, useRef } from 'react';
import type { Api } from './api.js';

type Computer = ItemOf<'/workspaces/{workspace}/computers'>;

/** The workspace's computers, newest first, a page at a time: scrolling to the end loads the next. */
export function ComputerList({ api, workspace, limit }: { api: Api; workspace: string; limit: number }) {
  const list = api.useInfiniteQuery('/workspaces/{workspace}/computers', {
    params: { path: { workspace }, query: { limit } },
  });
  const remove = api.useOperationMutation('delete', '/workspaces/{workspace}/computers/{computer}');
  const end = useRef<HTMLDivElement>(null);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = list;

  useEffect(() => {
    const sentinel = end.current;
    if (!sentinel || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && hasNextPage && !isFetchingNextPage) void fetchNextPage();
    });
    observer.observe(sentinel);
    return () => observer.disconnect();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  if (list.error) return <p role="alert">{list.error.message}</p>;
  const computers = itemsOf<Computer>(list.data);
  return (
    <section aria-label="computers" data-complete={list.isSuccess && !hasNextPage}>
      <ul>
        {computers.map((c) => (
          <li
            key={c.id}
            data-testid="computer"
            data-name={c.name}
            data-state={c.state}
            style={{ height: 120 }}
          >
            {c.name} <span>{c.state}</span> {c.size} {c.image}{' '}
            <button
              type="button"
              aria-label={`delete ${c.name}`}
              disabled={remove.isPending}
              onClick={() => remove.mutate({ params: { path: { workspace, computer: c.id } } })}
            >
              Delete
            </button>
          </li>
        ))}
      </ul>
      <div ref={end} data-testid="end" />
      {hasNextPage && (
        <button type="button" onClick={() => void fetchNextPage()} disabled={isFetchingNextPage}>
          Load more
        </button>
      )}
    </section>
  );
}
