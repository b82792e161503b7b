// C++ exceptions: thrown two frames below the catch, through a frame
// with a destructor to run, caught, and a rethrow caught again.
#include <cstdio>
#include <stdexcept>

static int cleanups;

struct Guard {
	~Guard() { cleanups++; }
};

static int __attribute__((noinline)) inner(int v)
{
	if (v > 2)
		throw std::runtime_error("too big");
	return v * 2;
}

static int __attribute__((noinline)) middle(int v)
{
	Guard g;

	return inner(v) + 1;
}

static int __attribute__((noinline)) rethrow(int v)
{
	try {
		return middle(v);
	} catch (const std::exception &) {
		cleanups += 10;
		throw;
	}
}

int main()
{
	int caught = 0, sum = middle(1);

	try {
		sum += middle(3);
	} catch (const std::runtime_error &e) {
		caught++;
	}
	try {
		sum += rethrow(5);
	} catch (...) {
		caught++;
	}
	std::printf("%d %d %d\n", sum, caught, cleanups);
	return caught != 2;
}
