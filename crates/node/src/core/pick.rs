//! Which waiting requests the leader puts in the next batch: fair between clients, so that one
//! client with many requests waiting delays another's by about one batch, not by its backlog.
//!
//! A batch holds one class of request (check, enrol, delete). The clients take turns leading
//! (their names in order, after the last batch's lead): the lead's oldest request gives the
//! class, and the batch takes every client's oldest requests of that class in turn, one each per
//! pass, up to `max`. A single client's requests go in arrival order.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::wire::Kind;

/// A waiting request as the picker sees it.
#[derive(Clone, Debug)]
pub(crate) struct Waiting<'a> {
    /// The client that sent it.
    pub client: &'a str,
    /// Its class: a submission's kind, `None` for a deletion.
    pub class: Option<Kind>,
    /// How long it has waited.
    pub waited: Duration,
}

/// The client of a bound request id (`who/id`, see `service::authorize`): what comes before
/// the first `/` (the whole id if it has none).
pub(crate) fn client_of(request_id: &str) -> &str {
    request_id.split_once('/').map_or(request_id, |(who, _)| who)
}

/// The next batch from `queue` (in arrival order): the positions it takes, in batch order, and
/// the client that leads it; `None` while nothing waits, or while the batch is not full and
/// none of its requests has waited `wait`. `after` is the previous batch's lead.
pub(crate) fn pick(queue: &[Waiting], after: Option<&str>, max: usize, wait: Duration) -> Option<(Vec<usize>, String)> {
    let mut by_client: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, w) in queue.iter().enumerate() {
        by_client.entry(w.client).or_default().push(i);
    }
    let next = after
        .and_then(|a| by_client.range::<str, _>((std::ops::Bound::Excluded(a), std::ops::Bound::Unbounded)).next());
    let (&lead, first) = next.or_else(|| by_client.iter().next())?;
    let class = queue[first[0]].class;
    // The clients in turn from the lead, each with its requests of the class (oldest first).
    let mut turns: Vec<std::iter::Peekable<std::vec::IntoIter<usize>>> = by_client
        .range(lead..)
        .chain(by_client.range(..lead))
        .map(|(_, own)| {
            own.iter().copied().filter(|&i| queue[i].class == class).collect::<Vec<_>>().into_iter().peekable()
        })
        .collect();
    let mut taken = Vec::new();
    while taken.len() < max.max(1) && turns.iter_mut().any(|t| t.peek().is_some()) {
        for t in &mut turns {
            if taken.len() == max.max(1) {
                break;
            }
            taken.extend(t.next());
        }
    }
    let ready = taken.len() >= max.max(1) || taken.iter().any(|&i| queue[i].waited >= wait);
    ready.then(|| (taken, lead.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(client: &str, class: Option<Kind>, waited_ms: u64) -> Waiting<'_> {
        Waiting { client, class, waited: Duration::from_millis(waited_ms) }
    }

    const CHECK: Option<Kind> = Some(Kind::Check);
    const ENROL: Option<Kind> = Some(Kind::Enroll);

    /// One client: its requests of the oldest one's class, in arrival order, up to `max`; a
    /// batch that is not full waits until one of its requests has waited `wait`.
    #[test]
    fn one_client_goes_in_arrival_order() {
        let q = [w("a", CHECK, 30), w("a", ENROL, 20), w("a", CHECK, 10), w("a", CHECK, 0)];
        let ms = Duration::from_millis;
        assert_eq!(pick(&q, None, 32, ms(20)), Some((vec![0, 2, 3], "a".into())));
        assert_eq!(pick(&q, None, 2, ms(100)), Some((vec![0, 2], "a".into())), "full");
        assert_eq!(pick(&q, None, 32, ms(100)), None, "not full, none waited long enough");
        assert_eq!(pick(&[], None, 32, ms(0)), None);
    }

    /// A client with 100 requests waiting and another with one: the other's is in the next
    /// batch, whoever led the last; with different classes the clients lead in turn.
    #[test]
    fn a_flooding_client_delays_another_by_one_batch_at_most() {
        let mut q: Vec<Waiting> = (0..100).map(|i| w("flood", CHECK, 1000 - i)).collect();
        q.push(w("calm", CHECK, 1));
        let ms = Duration::from_millis;
        for after in [None, Some("calm"), Some("flood"), Some("zzz")] {
            let (batch, _) = pick(&q, after, 32, ms(20)).unwrap();
            assert_eq!(batch.len(), 32);
            assert!(batch.contains(&100), "after {after:?}: {batch:?}");
            // the flooder's requests in arrival order
            let flood: Vec<usize> = batch.iter().copied().filter(|&i| i < 100).collect();
            assert_eq!(flood, (0..31).collect::<Vec<_>>());
        }
        // The calm client enrols while the flooder checks: they lead in turn.
        q[100] = w("calm", ENROL, 30);
        let (batch, lead) = pick(&q, Some("flood"), 32, ms(20)).unwrap();
        assert_eq!((batch, lead.as_str()), (vec![100], "calm"));
        let (batch, lead) = pick(&q, Some("calm"), 32, ms(20)).unwrap();
        assert_eq!((batch.len(), lead.as_str()), (32, "flood"));
    }

    /// Three clients share a full batch one each per pass, the lead first.
    #[test]
    fn clients_take_one_each_per_pass() {
        let q = [
            w("b", CHECK, 9),
            w("b", CHECK, 8),
            w("b", CHECK, 7),
            w("c", CHECK, 6),
            w("a", CHECK, 5),
            w("a", CHECK, 4),
        ];
        let (batch, lead) = pick(&q, Some("a"), 5, Duration::ZERO).unwrap();
        assert_eq!(lead, "b");
        assert_eq!(batch, vec![0, 3, 4, 1, 5]);
    }

    #[test]
    fn the_client_of_a_bound_id_is_before_its_first_slash() {
        assert_eq!(client_of("demo/r/1"), "demo");
        assert_eq!(client_of("plain"), "plain");
    }
}
