//! [`Cost`]: what a task has spent, or may spend.
use std::ops::{Add, AddAssign};

/// What a task has spent, or may spend, in the units the caller charges:
/// model tokens and money.
///
/// Money is in millionths of whatever currency you count in (micro-dollars
/// for USD: a model priced at $3 per million tokens costs 3 per token), so
/// sums are exact integers. Sums saturate rather than overflow.
///
/// ```
/// use tenacious::agent::Cost;
///
/// let round = Cost::tokens(1_200) + Cost::money_micros(3_600);
/// assert_eq!(round, Cost { tokens: 1_200, money_micros: 3_600 });
/// assert_eq!(Cost::tokens(u64::MAX) + Cost::tokens(1), Cost::tokens(u64::MAX));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Cost {
    /// Model tokens (prompt and completion, as you count them).
    pub tokens: u64,
    /// Money, in millionths of the currency unit.
    pub money_micros: u64,
}

impl Cost {
    /// Nothing spent.
    pub const ZERO: Self = Self {
        tokens: 0,
        money_micros: 0,
    };

    /// `tokens` model tokens and no money.
    #[must_use]
    pub const fn tokens(tokens: u64) -> Self {
        Self {
            tokens,
            money_micros: 0,
        }
    }

    /// `micros` millionths of the currency unit and no tokens.
    #[must_use]
    pub const fn money_micros(micros: u64) -> Self {
        Self {
            tokens: 0,
            money_micros: micros,
        }
    }

    /// Both costs, each saturating at `u64::MAX`.
    #[must_use]
    pub const fn saturating_add(self, other: Self) -> Self {
        Self {
            tokens: self.tokens.saturating_add(other.tokens),
            money_micros: self.money_micros.saturating_add(other.money_micros),
        }
    }
}

impl Add for Cost {
    type Output = Self;
    /// [`Cost::saturating_add`].
    fn add(self, other: Self) -> Self {
        self.saturating_add(other)
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, other: Self) {
        *self = self.saturating_add(other);
    }
}
