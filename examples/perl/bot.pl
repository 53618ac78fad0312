#!/usr/bin/perl
# Starter kit: a Shanghai Rummy bot in Perl 5, core modules only (JSON::PP).
# It speaks protocol 2 of docs/PROTOCOL.md: it goes down when its hand holds
# the contract, lays off, takes or buys cards that fit, and discards costly
# loose cards. Logs go to stderr; stdout carries protocol lines only.
#   arena check "perl examples/perl/bot.pl"
use strict; use warnings;
use JSON::PP;
$| = 1;                                   # flush every line: the arena reads a pipe
# JSON::PP writes what it is given: echo the decoded id as it is (a regex
# capture would go out as "7"), and send JSON::PP::true/false for a buy.
my $json = JSON::PP->new->canonical;
my %RV = (A=>1, J=>11, Q=>12, K=>13);     # rank value, ace low
my %PTS; my $wild_deuces = 1;
my $me = 0;

sub rank { my $c = shift; return 'JK' if $c eq 'JK'; (my $r = $c) =~ s/[CDHS]$//; $r }
sub suit { my $c = shift; return '' if $c eq 'JK'; substr($c, -1) }
sub rval { my $r = shift; $RV{$r} // $r }
sub is_wild { my $c = shift; $c eq 'JK' || ($wild_deuces && rank($c) eq '2') }
sub points { my $c = shift; my $r = rank($c);
  return 25 if $r eq 'JK'; return 20 if $r eq '2'; return 15 if $r eq 'A';
  return 10 if rval($r) >= 10; 5 }
sub rname { my $v = shift; $v == 1 || $v == 14 ? 'A' : $v == 11 ? 'J' : $v == 12 ? 'Q' : $v == 13 ? 'K' : "$v" }

sub send_line { print $json->encode($_[0]), "\n" }

# contract "2S3+R4" -> list of [kind, length]
sub terms { my @t;
  for my $part (split /\+/, shift) {
    my ($n, $k, $len) = $part =~ /^(\d*)([SR])(\d+)$/ or die "odd contract $part";
    push @t, [$k eq 'S' ? 'set' : 'run', $len] for 1 .. ($n || 1);
  }
  @t }

# candidate melds from the hand (indices): {kind, idx=>[naturals], wilds=>n, rank/suit/low}
sub candidates { my ($cards, $kind, $len) = @_; my @cand;
  if ($kind eq 'set') {
    my %by; for my $i (0..$#$cards) { my $c = $cards->[$i]; next if is_wild($c); push @{$by{rank($c)}}, $i }
    for my $r (keys %by) { my @ix = @{$by{$r}};
      if (@ix > $len) {            # every choice of $len, so a duplicate can go to a run
        my @comb = ([]); for my $i (@ix) { push @comb, map { [@$_, $i] } grep { @$_ < $len } @comb }
        push @cand, map { {kind=>'set', rank=>$r, idx=>$_, wilds=>0} } grep { @$_ == $len } @comb }
      if (@ix >= $len) { push @cand, {kind=>'set', rank=>$r, idx=>[@ix], wilds=>0} }
      elsif (@ix * 2 >= $len) { push @cand, {kind=>'set', rank=>$r, idx=>[@ix], wilds=>$len - @ix} }
    }
  } else {
    for my $s (qw(C D H S)) {
      my %at;   # rank value -> index of one natural card of suit $s
      for my $i (0..$#$cards) { my $c = $cards->[$i]; next if $c eq 'JK' || suit($c) ne $s;
        my $v = rval(rank($c)); $at{$v} //= $i; $at{14} //= $i if $v == 1; }
      for my $lo (1 .. 15 - $len) { my (@pos, $nat);
        for my $v ($lo .. $lo + $len - 1) {
          my $i = $at{$v};
          # a 2 of the suit is natural only at the 2-position; elsewhere wilds come from the pool
          if (defined $i && (!is_wild($cards->[$i]) || $v == 2)) { push @pos, $i; $nat++ } else { push @pos, undef }
        }
        next unless $nat; my $w = $len - $nat; next if $w > $nat;
        push @cand, {kind=>'run', suit=>$s, low=>$lo, pos=>\@pos, idx=>[grep defined, @pos], wilds=>$w};
      }
    }
  }
  sort { $a->{wilds} <=> $b->{wilds} } @cand }

# find a set of disjoint melds making the contract
sub find_contract { my ($cards, $contract) = @_;
  my @t = terms($contract); my @res;
  my $search; $search = sub { my ($k, $used, $wused, $ranks) = @_;
    return 1 if $k == @t;
    for my $c (candidates($cards, @{$t[$k]})) {
      next if grep { $used->{$_} } @{$c->{idx}};
      next if $c->{kind} eq 'set' && $ranks->{$c->{rank}};
      my %u = (%$used, map { $_ => 1 } @{$c->{idx}});
      my @pool = grep { !$u{$_} && is_wild($cards->[$_]) } 0..$#$cards;
      next if $c->{wilds} > @pool;
      my @w = @pool[0 .. $c->{wilds} - 1]; $u{$_} = 1 for @w;
      push @res, {%$c, wix=>\@w};
      return 1 if $search->($k + 1, \%u, 0, {%$ranks, ($c->{kind} eq 'set' ? ($c->{rank} => 1) : ())});
      pop @res;
    }
    0 };
  $search->(0, {}, 0, {}) ? @res : () }

# meld as written on the wire, plus a summary for lay-offs
sub meld_cards { my ($cards, $m) = @_;
  if ($m->{kind} eq 'set') { return [map { $cards->[$_] } @{$m->{idx}}, @{$m->{wix}}] }
  my @w = @{$m->{wix}}; [map { defined $_ ? $cards->[$_] : $cards->[shift @w] } @{$m->{pos}}] }

# table melds -> {kind, rank | suit, low, high, nat, wild}
sub summarize { my $m = shift; my $sf = $m->{stands_for}; my ($nat, $wild) = (0, 0);
  for my $i (0..$#{$m->{cards}}) {
    my ($c, $s) = ($m->{cards}[$i], $sf->[$i]);
    if ($m->{kind} eq 'set') { (is_wild($c) && rank($c) ne $s) ? $wild++ : $nat++ }
    else { $c eq $s ? $nat++ : $wild++ }
  }
  if ($m->{kind} eq 'set') { return {kind=>'set', rank=>$sf->[0], nat=>$nat, wild=>$wild} }
  my $lo = rval(rank($sf->[0])); my $hi = rval(rank($sf->[-1])); $hi = 14 if $hi == 1 && @$sf > 1;
  {kind=>'run', suit=>suit($sf->[0]), low=>$lo, high=>$hi, nat=>$nat, wild=>$wild} }

# can card go on meld summary? returns end ('low'/'high'/undef for set) or nothing; updates summary
sub fits { my ($s, $c) = @_;
  if ($s->{kind} eq 'set') {
    if (!is_wild($c) && rank($c) eq $s->{rank}) { $s->{nat}++; return (1, undef) }
    return;
  }
  return if is_wild($c) || suit($c) ne $s->{suit};
  my $v = rval(rank($c));
  # a run from a low ace takes nothing below; one up to a high ace nothing above
  if ($s->{low} > 1 && $s->{high} < 14 && $v == $s->{low} - 1) { $s->{low}--; $s->{nat}++; return (1, 'low') }
  if ($s->{high} < 14 && $s->{low} > 1 && ($v == $s->{high} + 1 || ($v == 1 && $s->{high} == 13))) {
    $s->{high}++; $s->{nat}++; return (1, 'high') }
  if ($s->{low} == 1 && $s->{high} < 13 && $v == $s->{high} + 1) { $s->{high}++; $s->{nat}++; return (1, 'high') }
  return }

sub play { my ($view, $id) = @_;
  my @cards = @{$view->{cards}}; my %gone; my %reply = (id => $id);
  my @table = map { summarize($_) } @{$view->{melds}};
  my $down = $view->{down}[$me];
  if (!$down) {
    my @m = find_contract(\@cards, $view->{contract});
    if (@m) {
      $reply{go_down} = [map { meld_cards(\@cards, $_) } @m];
      for my $x (@m) { $gone{$_} = 1 for @{$x->{idx}}, @{$x->{wix}} }
      for my $x (@m) {
        push @table, $x->{kind} eq 'set'
          ? {kind=>'set', rank=>$x->{rank}, nat=>scalar @{$x->{idx}}, wild=>$x->{wilds}}
          : {kind=>'run', suit=>$x->{suit}, low=>$x->{low}, high=>$x->{low} + $#{$x->{pos}}, nat=>scalar @{$x->{idx}}, wild=>$x->{wilds}};
      }
      $down = 1;
    }
  }
  my @lay;
  if ($down) {
    my $more = 1;
    while ($more) { $more = 0;
      for my $i (0..$#cards) { next if $gone{$i};
        for my $mi (0..$#table) {
          my ($ok, $end) = fits($table[$mi], $cards[$i]); next unless $ok;
          push @lay, {meld=>$mi, card=>$cards[$i], (defined $end ? (end=>$end) : ())}; $gone{$i} = 1; $more = 1; last;
        }
      }
    }
    # wilds onto sets that can take them, only if that empties the hand
    my @left = grep { !$gone{$_} } 0..$#cards;
    if (@left && !grep { !is_wild($cards[$_]) } @left) {
      for my $i (@left) { for my $mi (0..$#table) { my $s = $table[$mi];
        next unless $s->{kind} eq 'set' && $s->{wild} < $s->{nat};
        $s->{wild}++; push @lay, {meld=>$mi, card=>$cards[$i]}; $gone{$i} = 1; last } }
    }
  }
  my @left = grep { !$gone{$_} } 0..$#cards;
  # a discard must leave a card: never end with exactly one card left to throw
  while (@left == 1 && @lay) { my $l = pop @lay; my ($i) = grep { $gone{$_} && $cards[$_] eq $l->{card} } 0..$#cards; delete $gone{$i}; @left = grep { !$gone{$_} } 0..$#cards }
  if (@left == 1 && $reply{go_down}) { delete $reply{go_down}; %gone = (); @lay = (); @left = 0..$#cards }
  $reply{lay_off} = \@lay if @lay;
  return \%reply unless @left;             # went out: no discard
  # discard: costliest card that helps least; keep wilds
  my %rc; $rc{rank($cards[$_])}++ for @left;
  my ($best, $bs);
  for my $i (@left) { my $c = $cards[$i];
    my $s = points($c) - ($rc{rank($c)} >= 2 ? 12 : 0) - (is_wild($c) ? 100 : 0);
    if (!is_wild($c)) { for my $j (@left) { next if $j == $i || suit($cards[$j]) ne suit($c);
      $s -= 4 if abs(rval(rank($cards[$j])) - rval(rank($c))) <= 2 } }
    ($best, $bs) = ($c, $s) if !defined $bs || $s > $bs;
  }
  $reply{discard} = $best;
  \%reply }

sub wanted { my ($view, $c) = @_; my @h = @{$view->{cards}};
  return 1 if is_wild($c);
  my $same = grep { !is_wild($_) && rank($_) eq rank($c) } @h;
  return 1 if $same >= 1 && $view->{contract} =~ /S/;
  if ($view->{contract} =~ /R/) {
    my $near = grep { !is_wild($_) && suit($_) eq suit($c) && abs(rval(rank($_)) - rval(rank($c))) <= 1 } @h;
    return 1 if $near >= 2;
  }
  0 }

while (my $line = <STDIN>) {
  next unless $line =~ /\S/;
  my $msg = eval { $json->decode($line) } or do { print STDERR "bad line: $line"; next };
  my $t = $msg->{type} // '';
  if ($t eq 'start') {
    $me = $msg->{seat}; $wild_deuces = $msg->{rules}{wild_deuces} ? 1 : 0;
    send_line({type=>'ready', name=>'starter-perl', protocol=>2});
  } elsif ($t eq 'request') {
    my ($v, $k) = ($msg->{view}, $msg->{kind});
    my $r;
    if ($k eq 'draw') {
      my $up = $v->{upcard};
      my $take = defined $up && grep({ $_ eq 'upcard' } @{$msg->{options}}) && !$v->{down}[$me] && wanted($v, $up);
      $r = {id=>$msg->{id}, draw=>$take ? 'upcard' : 'stock'};
    } elsif ($k eq 'buy') {
      my $up = $v->{upcard};
      $r = {id=>$msg->{id}, buy=>(defined $up && $v->{buys_left}[$me] > 0 && $v->{card_counts}[$me] < 14 && wanted($v, $up)) ? JSON::PP::true : JSON::PP::false};
    } elsif ($k eq 'play') {
      $r = play($v, $msg->{id});
    } else { $r = {id=>$msg->{id}} }
    send_line($r);
  } elsif ($t eq 'error') {
    print STDERR "arena refused request $msg->{id}: $msg->{fault}: $msg->{reason}\n";
  } elsif ($t eq 'quit') { exit 0 }
}
